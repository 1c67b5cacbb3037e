// The elements' descriptions, from their sources (scripts/custom-elements.mjs writes them; run it after
// changing an element's attributes, events or JSDoc header; tests/js/custom-elements.test.mjs fails
// when either file is stale):
//   custom-elements.json                  the Custom Elements Manifest (schema 1.0.0) editors and Storybook
//                                         read: tag names, attributes, properties, events, CSS parts
//   web/components/headlab-components.d.ts  the elements' types and their HTMLElementTagNameMap entries
//                                         (the npm package's components/index.d.ts)
// Attributes and properties come from each class's props table (what observedAttributes returns),
// loaded in Node with HTMLElement stubbed; descriptions, events and CSS parts from its JSDoc header
// (@attr, @prop, @fires, @csspart).
import { build } from 'esbuild';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// Properties every HTMLElement has (e.g. part, a DOMTokenList): an element's attribute of that name
// stays in the manifest, but its type is the platform's.
const INHERITED = new Set(['part', 'title', 'hidden', 'id', 'lang', 'dir', 'slot', 'style', 'role', 'className', 'dataset', 'inert', 'translate', 'draggable', 'spellcheck', 'autofocus', 'popover', 'accessKey', 'tabIndex', 'nonce']);
const web = path.join(repo, 'web');
export const MANIFEST = path.join(repo, 'custom-elements.json');
export const TYPES = path.join(web, 'components/headlab-components.d.ts');

/** Every element class, loaded in Node (HTMLElement and customElements stubbed), after define(). */
export async function loadElementClasses() {
  const names = (await readdir(path.join(web, 'components/entries'))).filter((f) => f.endsWith('.js')).map((f) => f.slice(0, -3)).sort();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'headlab-ce-'));
  try {
    const file = path.join(dir, 'elements.mjs');
    await build({
      stdin: { contents: names.map((n, i) => `export * as e${i} from './web/components/headlab-${n}.js';`).join('\n'), resolveDir: repo, loader: 'js' },
      bundle: true, format: 'esm', platform: 'neutral', outfile: file, logLevel: 'error', mainFields: ['module', 'main'],
      plugins: [{
        name: 'stubs',
        setup(b) {
          b.onResolve({ filter: /^headlab:/ }, (args) => ({ path: args.path, namespace: 'stub' }));
          b.onLoad({ filter: /.*/, namespace: 'stub' }, () => ({ contents: 'export default null; export const css = ""; export const fontFaces = ""; export const wasmNextToBundle = true; export const modelUrls = null;', loader: 'js' }));
        },
      }],
    });
    const saved = { HTMLElement: globalThis.HTMLElement, customElements: globalThis.customElements };
    globalThis.HTMLElement = class {};
    globalThis.customElements = { get: () => undefined, define() {} };
    try {
      const mod = await import(pathToFileURL(file).href);
      return names.map((name, i) => {
        const [className, cls] = Object.entries(mod[`e${i}`]).find(([, v]) => typeof v === 'function' && v.tag === `headlab-${name}`);
        cls.define();
        return { name, className, cls };
      });
    } finally {
      Object.assign(globalThis, saved);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The JSDoc header of an element's source: description, @attr, @prop, @fires, @csspart. */
export function parseHeader(source) {
  const block = /\/\*\*([\s\S]*?)\*\//.exec(source)?.[1] ?? '';
  const lines = block.split('\n').map((l) => l.replace(/^\s*\* ?/, ''));
  const doc = { description: [], attrs: [], props: [], events: [], parts: [] };
  let last = null;
  for (const line of lines) {
    const tag = /^@(attr|prop|fires|csspart)\s+(?:\{([^}]*)\}\s+)?(\S+)\s*(.*)$/.exec(line);
    if (tag) {
      const [, kind, type, name, text] = tag;
      last = { name, type, description: text.trim() };
      ({ attr: doc.attrs, prop: doc.props, fires: doc.events, csspart: doc.parts })[kind].push(last);
    } else if (/^@\w/.test(line)) {
      last = null;
    } else if (last && line.trim()) {
      last.description = `${last.description} ${line.trim()}`.trim();
    } else if (!last && doc.attrs.length + doc.events.length + doc.parts.length === 0) {
      doc.description.push(line.trim());
    }
  }
  return { ...doc, description: doc.description.join(' ').replace(/\s+/g, ' ').trim().replace(/^<[\w-]+>:\s*/, '') };
}

function typeText(spec) {
  if (spec.type === 'bool') return 'boolean';
  if (spec.type === 'int' || spec.type === 'number') return spec.default === null ? 'number | null' : 'number';
  if (spec.type === 'enum') return spec.values.map((v) => `'${v}'`).join(' | ');
  return 'string';
}

const camelToKebab = (name) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** The manifest and the .d.ts text, from the sources. */
export async function describe() {
  const classes = await loadElementClasses();
  const modules = [];
  const elements = [];
  for (const { name, className, cls } of classes) {
    const source = await readFile(path.join(web, `components/headlab-${name}.js`), 'utf8');
    const doc = parseHeader(source);
    const documented = new Map(doc.attrs.map((a) => [a.name, a]));
    const attributes = [];
    const members = [];
    for (const [field, spec] of Object.entries(cls.props ?? {})) {
      const attr = spec.attr ?? camelToKebab(field);
      const text = documented.get(attr)?.description ?? (attr === 'compact' ? 'hides the explanations (for narrow course columns)' : '');
      const def = spec.default === null || spec.default === undefined ? undefined : JSON.stringify(spec.default);
      attributes.push({
        name: attr, type: { text: typeText(spec) }, ...(def === undefined ? {} : { default: def }), description: text, fieldName: field,
      });
      members.push({ kind: 'field', name: field, type: { text: typeText(spec) }, ...(def === undefined ? {} : { default: def }), description: text, attribute: attr, reflects: true });
    }
    // The language every element observes (shared/elements/base.js): HTMLElement's own `lang`.
    if ([...(cls.observedAttributes ?? [])].includes('lang') && !attributes.some((x) => x.name === 'lang')) {
      attributes.push({ name: 'lang', type: { text: 'string' },
        description: "the element's language: 'en' or 'es' (else the nearest ancestor's lang, else the page's; English for any other)",
        ...(cls.props ? { fieldName: 'lang' } : {}) });
    }
    // Attributes read by CSS only (theme), documented but not observed.
    for (const a of doc.attrs) {
      if (!attributes.some((x) => x.name === a.name)) attributes.push({ name: a.name, type: { text: a.type ?? 'string' }, description: a.description });
    }
    for (const p of doc.props) {
      if (!members.some((m) => m.name === p.name)) members.push({ kind: 'field', name: p.name, type: { text: p.type === 'object' ? 'object | null' : p.type ?? 'unknown' }, description: p.description });
    }
    const modulePath = `components/${name}.js`;
    modules.push({
      kind: 'javascript-module', path: modulePath,
      declarations: [{
        kind: 'class', customElement: true, name: className, tagName: cls.tag, description: doc.description,
        superclass: { name: 'HTMLElement' }, attributes, members,
        events: doc.events.map((e) => ({ name: e.name, type: { text: 'CustomEvent' }, description: e.description })),
        cssParts: doc.parts.map((p) => ({ name: p.name, description: p.description })),
      }],
      exports: [
        { kind: 'js', name: className, declaration: { name: className, module: modulePath } },
        { kind: 'custom-element-definition', name: cls.tag, declaration: { name: className, module: modulePath } },
      ],
    });
    elements.push({ name, className, tag: cls.tag, members, events: doc.events, description: doc.description });
  }
  const manifest = { schemaVersion: '1.0.0', readme: 'docs/install.md', modules };
  return { manifest: `${JSON.stringify(manifest, null, 2)}\n`, types: typesText(elements), classes };
}

function typesText(elements) {
  const out = [
    '// Written by scripts/custom-elements.mjs from the elements\' sources: do not edit by hand.',
    '// The npm package\'s components/index.d.ts: `import \'headlab/components\'` (every element, loaded on',
    '// first use) or `import \'headlab/components/<name>\'` (one), with each tag in HTMLElementTagNameMap.',
    '// (In the package, components/index.d.ts imports \'../web/lib/headlab.js\'.)',
    'import type { CreateHeadlabOptions, Headlab } from \'../lib/headlab.js\';',
    '',
  ];
  for (const { className, tag, members, events, description } of elements) {
    out.push(`/** <${tag}>: ${description.replace(/\*\//g, '*\\/')} */`);
    out.push(`export declare class ${className} extends HTMLElement {`);
    for (const m of members.filter((x) => !INHERITED.has(x.name))) {
      if (m.description) out.push(`  /** ${m.description.replace(/\*\//g, '*\\/')}${m.attribute ? ` (attribute \`${m.attribute}\`)` : ''} */`);
      out.push(`  ${m.name}: ${m.type.text};`);
    }
    out.push('}');
    if (events.length > 0) {
      out.push(`/** The events <${tag}> dispatches (bubbling, composed CustomEvents). */`);
      out.push(`export type ${className}EventType = ${events.map((e) => `'${e.name}'`).join(' | ')};`);
    }
    out.push('');
  }
  out.push('/** Every HeadLab tag, in the order of the site. */');
  out.push(`export declare const tags: readonly (${elements.map(({ tag }) => `'${tag}'`).join(' | ')})[];`);
  out.push('/** Loads and registers one element (once); for elements the document watcher cannot see (inside shadow roots). */');
  out.push('export declare function loadElement<K extends (typeof tags)[number]>(tag: K): Promise<Record<string, CustomElementConstructor>>;');
  out.push('/** createHeadlab of \'headlab\'; without options, the instance the elements use (one per page). */');
  out.push('export declare function createHeadlab(options?: CreateHeadlabOptions): Promise<Headlab>;');
  out.push('');
  out.push('declare global {');
  out.push('  interface HTMLElementTagNameMap {');
  for (const { className, tag } of elements) out.push(`    '${tag}': ${className};`);
  out.push('  }');
  out.push('}');
  return `${out.join('\n')}\n`;
}
