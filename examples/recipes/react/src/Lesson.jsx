import { useState } from 'react';
import 'headlab/components';   // defines every element; each one's code loads when the page first uses it
import { WorkedExample } from './WorkedExample.jsx';

// React 19 passes attributes to custom elements as they are and listens to their events
// with on<event-name> props.
export function Lesson() {
  const [state, setState] = useState('loading');
  return (
    <main>
      <WorkedExample />
      <h2>Step by step</h2>
      <p>The element is <output id="element-state">{state}</output>.</p>
      <headlab-worked-example step="all" onheadlab-ready={() => setState('ready')}></headlab-worked-example>
      <h2>Every element</h2>
      <headlab-heads></headlab-heads>
      <headlab-params></headlab-params>
      <headlab-scaling></headlab-scaling>
      <headlab-misconceptions></headlab-misconceptions>
      <headlab-choosing-h></headlab-choosing-h>
      <headlab-trainer></headlab-trainer>
      <headlab-language-model pretrained></headlab-language-model>
      <headlab-model-explorer></headlab-model-explorer>
    </main>
  );
}
