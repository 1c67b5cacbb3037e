// "Switch heads off", a panel of <headlab-language-model>: a checkbox per head
// (head-grid.js's HeadSwitches) and what switching heads off cost, from the snapshot's
// held-out results with the heads off and with every head on.

import { el, setText } from '../shared/render/dom.js';
import { fmt } from '../../lib/teach/format.js';
import { LM_EVAL_EXAMPLES } from '../../lib/teach/lm-session.js';
import { HeadSwitches } from './head-grid.js';

export class AblationPanel {
  /** @param {{ setHead: (layer: number, head: number, on: boolean) => Promise<void>, settled: () => void }} o  as HeadSwitches' */
  constructor(o) {
    this.switches = new HeadSwitches(o);
    this.note = el('p', { class: 'note note--warn', hidden: true, dataset: { testid: 'lm-ablation' } });
    this.element = el('section', { class: 'part' }, el('h3', {}, 'Switch heads off'),
      el('p', { class: 'small muted explain' }, `A switched-off head adds nothing to its layer’s output. The held-out loss and accuracy (${LM_EVAL_EXAMPLES} fixed sequences) show what it carried.`),
      el('fieldset', {}, el('legend', {}, 'Heads on'), this.switches.element), this.note);
  }

  /** The first run's snapshot `s`: which heads are off and what that costs. */
  render(s, running) {
    const off = s.scores.filter((_, i) => !s.enabled[i]);
    this.note.hidden = off.length === 0;
    if (!off.length || !s.allOn) return;
    const names = off.map((q) => `layer ${q.layer + 1} head ${q.head + 1}`).join(', ');
    setText(this.note, `With ${names} off: held-out accuracy ${fmt(s.eval.accuracy, 3)} (${fmt(s.allOn.accuracy, 3)} with every head on), ` +
      `loss ${fmt(s.eval.loss, 3)} (${fmt(s.allOn.loss, 3)}).${running ? ' Training goes on without it, so the other heads may take over.' : ''}`);
    this.switches.show(s.enabled);
  }
}
