import { useEffect, useState } from 'react';
import { createHeadlab } from 'headlab';
import { workedExample } from './worked-example.js';

// createHeadlab() is cached: this gets the instance main.jsx made (with the .wasm files' URLs).
export function WorkedExample() {
  const [result, setResult] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    let live = true;
    createHeadlab().then((lab) => live && setResult(workedExample(lab)), (e) => live && setError(String(e.message ?? e)));
    return () => { live = false; };
  }, []);
  if (error) return <p role="alert">{error}</p>;
  return (
    <section>
      <p>Output for “it”: <output id="output">{result ? result.output : '…'}</output></p>
      <p>Head 1, “it” over (ball, full, it): <output id="weights">{result ? result.weights : '…'}</output></p>
    </section>
  );
}
