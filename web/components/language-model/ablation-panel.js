// "Switch heads off", a panel of <headlab-language-model>: a checkbox per head
// (head-grid.js's HeadSwitches) and what switching heads off cost, from the snapshot's
// held-out results with the heads off and with every head on.

import { el, setText } from '../shared/render/dom.js';
import { fixed } from '../../lib/i18n/index.js';
import { LM_EVAL_EXAMPLES } from '../../lib/teach/lm-session.js';
import { HeadSwitches } from './head-grid.js';

export class AblationPanel {
  /**
   * @param {{ setHead: (layer: number, head: number, on: boolean) => Promise<void>, settled: () => void, t: Function }} o
   *   as HeadSwitches'
   */
  constructor(o) {
    const t = o.t;
    this.t = t;
    this.switches = new HeadSwitches(o);
    this.note = el('p', { class: 'note note--warn', hidden: true, dataset: { testid: 'lm-ablation' } });
    this.element = el('section', { class: 'part' }, el('h3', {}, t('lm.ablation.title')),
      el('p', { class: 'small muted explain' }, t('lm.ablation.explain', { n: LM_EVAL_EXAMPLES })),
      el('fieldset', {}, el('legend', {}, t('lm.ablation.legend')), this.switches.element), this.note);
  }

  /** The first run's snapshot `s`: which heads are off and what that costs. */
  render(s, running) {
    const off = s.scores.filter((_, i) => !s.enabled[i]);
    this.note.hidden = off.length === 0;
    if (!off.length || !s.allOn) return;
    const t = this.t;
    const num = (v) => fixed(t.lang, v, 3);
    const names = off.map((q) => t('lm.ablation.head', { layer: q.layer + 1, head: q.head + 1 })).join(', ');
    setText(this.note, t.plural('lm.ablation.note', off.length, { names, accuracy: num(s.eval.accuracy), allAccuracy: num(s.allOn.accuracy),
      loss: num(s.eval.loss), allLoss: num(s.allOn.loss) }) + (running ? t('lm.ablation.running') : ''));
    this.switches.show(s.enabled);
  }
}
