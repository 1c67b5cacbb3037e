import { useEffect, useState } from 'react';
import { createHeadlab } from 'headlab';
import { locateFile } from './wasm-files.js';
import { workedExample } from './worked-example.js';

// createHeadlab() is cached: every component that calls it shares one instance and one .wasm fetch.
export function WorkedExample() {
  const [result, setResult] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    let live = true;
    createHeadlab({ locateFile }).then((lab) => live && setResult(workedExample(lab)), (e) => live && setError(String(e.message ?? e)));
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
