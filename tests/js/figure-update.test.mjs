// Issue 32, point 5: the training views redraw their charts and heatmaps in place. figure.js's
// updateFigure changes the attributes and text of the SVG nodes a figure was drawn with; planFigure
// (which old node each new shape takes) and nodeChanges (the writes) are DOM-free and tested here on
// the real figures of the training charts; updateFigure runs on a small stand-in DOM, and every
// redraw in place must serialise exactly as the same figure drawn from scratch (the independent answer).
import { test } from 'node:test';
import assert from 'node:assert/strict';

/** A stand-in for the few DOM calls figure.js makes: elements with attributes, text and ordered children. */
class FakeNode {
  constructor(name) { Object.assign(this, { nodeName: name, attrs: new Map(), kids: [], parent: null, text: '', style: {}, dataset: {} }); }
  setAttribute(k, v) { this.attrs.set(k, String(v)); FakeNode.writes += 1; }
  getAttribute(k) { return this.attrs.get(k) ?? null; }
  removeAttribute(k) { this.attrs.delete(k); FakeNode.writes += 1; }
  set textContent(v) { this.text = String(v); this.kids = []; FakeNode.writes += 1; }
  get textContent() { return this.text; }
  get firstChild() { return this.kids[0] ?? null; }
  get lastChild() { return this.kids[this.kids.length - 1] ?? null; }
  get previousSibling() { return this.parent ? this.parent.kids[this.parent.kids.indexOf(this) - 1] ?? null : null; }
  get nextSibling() { return this.parent ? this.parent.kids[this.parent.kids.indexOf(this) + 1] ?? null : null; }
  append(...nodes) { for (const n of nodes) this.insertBefore(typeof n === 'string' ? Object.assign(new FakeNode('#text'), { text: n }) : n, null); }
  insertBefore(node, ref) {
    node.remove();
    const at = ref ? this.kids.indexOf(ref) : this.kids.length;
    if (at < 0) throw new Error('insertBefore: the reference node is not a child');
    this.kids.splice(at, 0, node);
    node.parent = this;
    FakeNode.moves += 1;
  }

  remove() {
    if (!this.parent) return;
    this.parent.kids.splice(this.parent.kids.indexOf(this), 1);
    this.parent = null;
  }

  addEventListener() {}
  /** Element name, sorted attributes, text and children: equal strings draw the same picture. */
  serialise() {
    const attrs = [...this.attrs].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => ` ${k}="${v}"`).join('');
    return `<${this.nodeName}${attrs}>${this.text}${this.kids.map((k) => k.serialise()).join('')}</${this.nodeName}>`;
  }
}
FakeNode.writes = 0;
FakeNode.moves = 0;

globalThis.document ??= {
  createElementNS: (_, name) => new FakeNode(name),
  createElement: () => ({ getContext: () => ({ font: '12px sans-serif', measureText(t) { return { width: t.length * 0.6 * parseFloat(/(\d+(\.\d+)?)px/.exec(this.font)?.[1] ?? 12) }; } }) }),
  createTextNode: (text) => Object.assign(new FakeNode('#text'), { text }),
};
const { figureToSVG, updateFigure, planFigure, nodeChanges, shapeNode } = await import('../../web/components/shared/render/figure.js');
const { curvesFigure, forPage } = await import('../../web/components/shared/render/trainer-curves.js');
const { heatmapFigure } = await import('../../web/components/shared/render/heatmap.js');

/** A seeded generator (mulberry32), so every failure names a reproducible case. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The loss chart of a run at `step`: as <headlab-trainer> draws it (two runs, log loss), from a loss that falls. */
function lossChart(step, { runs = 2, width = 520, marks = [] } = {}) {
  const series = [];
  for (let k = 0; k < runs; k++) {
    const points = [];
    for (let s = 0; s <= step; s += 10) points.push([s, 2 * Math.exp(-s / (300 + 200 * k)) + 1e-3]);
    series.push({ label: `h = ${k + 1}, training batch`, color: k ? '#d55e00' : '#2f6fd0', width: 1.4, opacity: 0.45, points: points.map(([s, v]) => [s, v * 1.1]) });
    series.push({ label: `h = ${k + 1}, held out`, color: k ? '#d55e00' : '#2f6fd0', dash: k === 1, points });
  }
  return forPage(curvesFigure({ series, yLog: true, yMin: 1e-4, xMax: Math.max(100, step * 1.25), marks, width, xLabel: 'training step', yLabel: 'loss' }));
}

const descs = (fig) => fig.shapes.map((s) => shapeNode(s)).filter(Boolean);
const count = (list) => list.reduce((m, d) => m.set(d.key, (m.get(d.key) ?? 0) + 1), new Map());

test('planFigure: the same figure again reuses every node where it was', () => {
  const d = descs(lossChart(500));
  const { plan, removed } = planFigure(d, d);
  assert.deepEqual(plan, d.map((_, i) => i));
  assert.deepEqual(removed, []);
});

test('planFigure: as a chart grows, a node is new only where a kind of shape has more of them than before', () => {
  for (const [from, to] of [[40, 60], [100, 900], [900, 2000], [2000, 150], [0, 3000]]) {
    const a = descs(lossChart(from)), b = descs(lossChart(to));
    const { plan, removed } = planFigure(a, b);
    const ca = count(a), cb = count(b);
    let fresh = 0, gone = 0;
    for (const key of new Set([...ca.keys(), ...cb.keys()])) {
      fresh += Math.max(0, (cb.get(key) ?? 0) - (ca.get(key) ?? 0));
      gone += Math.max(0, (ca.get(key) ?? 0) - (cb.get(key) ?? 0));
    }
    assert.equal(plan.filter((i) => i < 0).length, fresh, `steps ${from} → ${to}: new nodes`);
    assert.equal(removed.length, gone, `steps ${from} → ${to}: removed nodes`);
    // Each old node is taken at most once, and only by a shape of its own element and key.
    const used = plan.filter((i) => i >= 0);
    assert.equal(new Set(used).size, used.length, 'no node reused twice');
    plan.forEach((i, k) => { if (i >= 0) assert.ok(a[i].tag === b[k].tag && a[i].key === b[k].key, `shape ${k} takes a node of its kind`); });
    // Within a key, order is kept (so nodes never need to move among their own kind).
    for (const key of cb.keys()) {
      const seq = plan.filter((i, k) => i >= 0 && b[k].key === key);
      assert.deepEqual(seq, [...seq].sort((x, y) => x - y), `${key} nodes keep their order`);
    }
  }
});

test('nodeChanges: applying the writes to the old attributes gives the new ones exactly', () => {
  const a = descs(lossChart(300)), b = descs(lossChart(420, { marks: [{ x: 200, label: 'head 1 off' }] }));
  const { plan } = planFigure(a, b);
  let checked = 0;
  plan.forEach((i, k) => {
    if (i < 0) return;
    const { set, text } = nodeChanges(a[i], b[k]);
    const attrs = { ...a[i].attrs };
    for (const [name, value] of set) { if (value === null) delete attrs[name]; else attrs[name] = value; }
    assert.deepEqual(attrs, b[k].attrs, `shape ${k}`);
    assert.equal(text === undefined ? a[i].text : text, b[k].text, `shape ${k}'s text`);
    checked += 1;
  });
  assert.ok(checked > 20, `${checked} node pairs checked`);
  const same = nodeChanges(a[0], a[0]);
  assert.deepEqual(same, { set: [], text: undefined }, 'nothing to write for an unchanged node');
});

test('updateFigure: training steps redraw the loss chart in place, as drawn from scratch, with no new nodes at the same shape', () => {
  const svg = figureToSVG(lossChart(200));
  const overlay = document.createElementNS('', 'rect');  // a node of the caller's, after the figure's
  svg.append(overlay);
  const first = [...svg.kids];
  const polylines = first.filter((n) => n.nodeName === 'polyline');
  assert.equal(polylines.length, 4 + 4, 'two runs: four legend lines and four curves');
  let created = 0;
  for (let step = 210; step <= 600; step += 10) {
    const fig = lossChart(step);
    const r = updateFigure(svg, fig);
    created += r.created;
    const fresh = figureToSVG(fig);
    fresh.append(document.createElementNS('', 'rect'));
    assert.equal(svg.serialise(), fresh.serialise(), `step ${step}: the same SVG as drawn from scratch`);
    assert.equal(svg.lastChild, overlay, `step ${step}: the caller's node stays last`);
  }
  // The curves themselves are the same <polyline> nodes, their points changed.
  const now = svg.kids.filter((n) => n.nodeName === 'polyline');
  assert.deepEqual(now, polylines, 'the same polyline nodes');
  assert.notEqual(now[now.length - 1].getAttribute('points'), null);
  assert.ok(created <= 12, `only the few ticks the axis gained are new nodes (${created})`);
  // An update with the same figure writes nothing.
  const before = FakeNode.writes;
  const r = updateFigure(svg, lossChart(600));
  assert.deepEqual(r, { created: 0, removed: 0, changed: 0 });
  assert.equal(FakeNode.writes, before, 'no attribute or text written');
});

test('updateFigure: seeded random figures of changing shape end as drawn from scratch (seeds 1-40)', () => {
  const kinds = ['rect', 'line', 'text', 'polyline'];
  const figure = (rnd) => {
    const n = Math.floor(rnd() * 30);
    const shapes = Array.from({ length: n }, () => {
      const type = kinds[Math.floor(rnd() * kinds.length)];
      const v = () => Math.round(rnd() * 100);
      if (type === 'rect') return { type, x: v(), y: v(), w: v(), h: v(), fill: rnd() < 0.5 ? '#123456' : { role: 'text' }, opacity: rnd() < 0.3 ? 0.5 : undefined, data: rnd() < 0.2 ? { r: '1' } : undefined };
      if (type === 'line') return { type, x1: v(), y1: v(), x2: v(), y2: v(), stroke: { role: 'muted' }, strokeWidth: rnd() < 0.5 ? 1 : undefined };
      if (type === 'text') return { type, x: v(), y: v(), text: `t${v()}`, rotate: rnd() < 0.3 ? -45 : 0, anchor: rnd() < 0.5 ? 'end' : undefined, key: rnd() < 0.2 ? 'tick' : undefined };
      return { type, points: [[v(), v()], [v(), v()]], stroke: '#000', dash: rnd() < 0.5 };
    });
    return { width: 100 + Math.floor(rnd() * 3) * 50, height: 80, shapes };
  };
  for (let seed = 1; seed <= 40; seed++) {
    const rnd = random(seed);
    const svg = figureToSVG(figure(rnd));
    for (let k = 0; k < 6; k++) {
      const fig = figure(rnd);
      updateFigure(svg, fig);
      assert.equal(svg.serialise(), figureToSVG(fig).serialise(), `seed ${seed}, update ${k + 1}`);
    }
  }
});

test('updateFigure: a heatmap with new weights keeps every node and changes only the cells that changed colour', () => {
  const labels = ['0:a', '1:b', '2:c', '3:d'];
  const values = (shift) => labels.map((_, r) => labels.map((_, c) => ((r + c + shift) % 4) / 4));
  const draw = (shift) => heatmapFigure({ rowLabels: labels, colLabels: labels, values: values(shift), digits: 2 });
  const svg = figureToSVG(draw(0));
  const nodes = [...svg.kids];
  const r = updateFigure(svg, draw(1));
  assert.equal(r.created, 0);
  assert.equal(r.removed, 0);
  assert.deepEqual(svg.kids, nodes, 'the same nodes in the same order');
  assert.equal(svg.serialise(), figureToSVG(draw(1)).serialise());
  // Every cell's value moved, so each of the 16 rects and its printed number changed; labels and legend did not.
  assert.equal(r.changed, 16 + 16);
});

test('updateFigure refuses an SVG it did not draw, naming the argument', () => {
  assert.throws(() => updateFigure(document.createElementNS('', 'svg'), lossChart(10)), /updateFigure: svg must be a page figure/);
  assert.throws(() => updateFigure(figureToSVG(lossChart(10), { palette: { background: '#fff', text: '#000', muted: '#555', border: '#ccc', accent: '#00f', highlight: '#f00' } }), lossChart(20)),
    /updateFigure: svg must be a page figure/);
});
