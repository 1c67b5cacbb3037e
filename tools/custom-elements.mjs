// The elements' descriptions, from their sources (scripts/custom-elements.mjs writes them; run it after
// changing an element's attributes, events or JSDoc header; tests/js/custom-elements.test.mjs fails
// when either file is stale):
//   custom-elements.json                  the Custom Elements Manifest (schema 1.0.0) editors and Storybook
//                                         read: tag names, attributes, properties, events, CSS parts
//   web/components/headlab-components.d.ts  the elements' types and their HTMLElementTagNameMap entries
//                                         (the npm package's components/index.d.ts), from the manifest
//   web/components/types/<framework>.d.ts  React 19 JSX, Vue 3 GlobalComponents, Svelte's svelteHTML, Preact 11 JSX, from
//                                         the manifest (the package's components/<framework>.d.ts)
// Attributes and properties come from each class's props table (what observedAttributes returns),
// loaded in Node with HTMLElement stubbed; descriptions, other properties, methods, events (with their
// detail's type) and CSS parts from its JSDoc header (@attr, @prop, @method, @fires, @csspart).
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
/** Each framework's typing of the tags (frameworkTypes()): the package's components/<framework>.d.ts. */
export const FRAMEWORK_TYPES = { react: 'react', vue: 'vue', svelte: 'svelte', preact: 'preact' };
export const frameworkTypesFile = (framework) => path.join(web, `components/types/${framework}.d.ts`);

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

/** `text` from `start` (an opening brace) to its matching closing brace: [inside, index after]. */
function balanced(text, start) {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return [text.slice(start + 1, i), i + 1];
  }
  throw new Error(`unbalanced braces in a JSDoc tag: ${text}`);
}

/** Splits `text` at the commas outside brackets. */
function splitTop(text) {
  const parts = [];
  let depth = 0, from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if ('({[<'.includes(c)) depth++;
    else if (')}]>'.includes(c) && !(c === '>' && text[i - 1] === '=')) depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(text.slice(from));
  return parts.map((p) => p.trim()).filter(Boolean);
}

/** A method's signature `(a: T, b?: U) => R` as the manifest's parameters and return type. */
export function parseSignature(signature) {
  let depth = 0, close = -1;
  for (let i = 0; i < signature.length; i++) {
    if (signature[i] === '(') depth++;
    else if (signature[i] === ')' && --depth === 0) { close = i; break; }
  }
  const ret = /^\s*=>\s*([\s\S]+)$/.exec(signature.slice(close + 1));
  if (!signature.startsWith('(') || close < 0 || !ret) throw new Error(`@method type is not (params) => result: ${signature}`);
  const parameters = splitTop(signature.slice(1, close)).map((p) => {
    const [, name, optional, type] = /^(\w+)(\??):\s*([\s\S]+)$/.exec(p) ?? [];
    if (!name) throw new Error(`@method parameter is not name: type: ${p}`);
    return { name, type: { text: type }, ...(optional ? { optional: true } : {}) };
  });
  return { parameters, return: { type: { text: ret[1].trim() } } };
}

/**
 * The JSDoc header of an element's source: description, @attr, @prop, @method, @fires, @csspart. A tag is
 * `@kind {type} name description`; its type (braces balanced) and description may go on over the next lines,
 * up to a blank line or the next tag.
 */
export function parseHeader(source) {
  const block = /\/\*\*([\s\S]*?)\*\//.exec(source)?.[1] ?? '';
  const lines = block.split('\n').map((l) => l.replace(/^\s*\* ?/, ''));
  const doc = { description: [], attrs: [], props: [], methods: [], events: [], parts: [] };
  const kinds = { attr: doc.attrs, prop: doc.props, method: doc.methods, fires: doc.events, csspart: doc.parts };
  const tags = [];
  let last = null;
  for (const line of lines) {
    const tag = /^@(\w+)\s*([\s\S]*)$/.exec(line);
    if (tag) {
      last = kinds[tag[1]] ? { kind: tag[1], text: tag[2] } : null;
      if (last) tags.push(last);
    } else if (!line.trim()) {
      last = null;
    } else if (last) {
      last.text = `${last.text} ${line.trim()}`;
    } else if (tags.length === 0) {
      doc.description.push(line.trim());
    }
  }
  for (const { kind, text } of tags) {
    let type, rest = text.trim();
    if (rest.startsWith('{')) {
      const [inside, end] = balanced(rest, 0);
      type = inside.replace(/\s+/g, ' ').trim();
      rest = rest.slice(end).trim();
    }
    const [, name, description] = /^(\S+)\s*([\s\S]*)$/.exec(rest);
    kinds[kind].push({ name, type, description: description.replace(/\s+/g, ' ').trim() });
  }
  return { ...doc, description: doc.description.join(' ').replace(/\s+/g, ' ').trim().replace(/^<[\w-]+>:\s*/, '') };
}

function typeText(spec) {
  if (spec.type === 'bool') return 'boolean';
  if (spec.type === 'int' || spec.type === 'number') return spec.default === null ? 'number | null' : 'number';
  if (spec.type === 'enum') return spec.values.map((v) => `'${v}'`).join(' | ');
  return 'string';
}

/** The type an attribute takes in markup (JSX, Vue, Svelte): numbers for numeric ones, numeric enum values as numbers too. */
function attributeTypeText(type) {
  if (type === 'boolean') return 'boolean';
  if (/^number/.test(type)) return 'number | `${number}`';
  const values = [...type.matchAll(/'([^']*)'/g)].map((m) => m[1]);
  const numeric = values.filter((v) => /^\d+$/.test(v));
  return numeric.length > 0 ? `${type} | ${numeric.join(' | ')}` : type;
}

const camelToKebab = (name) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const comment = (text) => text.replace(/\*\//g, '*\\/');

/** The manifest and the .d.ts texts (the elements' and each framework's), from the sources. */
export async function describe() {
  const classes = await loadElementClasses();
  const modules = [];
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
      if (members.some((m) => m.name === p.name)) continue;
      const readonly = /^read-only\b/.test(p.description);
      const attribute = attributes.some((a) => a.name === p.name) ? { attribute: p.name } : {};
      members.push({ kind: 'field', name: p.name, type: { text: p.type ?? 'unknown' }, description: p.description.replace(/^read-only:?\s*/, ''),
        ...(readonly ? { readonly: true } : {}), ...attribute });
    }
    for (const m of doc.methods) members.push({ kind: 'method', name: m.name, description: m.description, ...parseSignature(m.type ?? '') });
    const modulePath = `components/${name}.js`;
    modules.push({
      kind: 'javascript-module', path: modulePath,
      declarations: [{
        kind: 'class', customElement: true, name: className, tagName: cls.tag, description: doc.description,
        superclass: { name: 'HTMLElement' }, attributes, members,
        events: doc.events.map((e) => ({ name: e.name, type: { text: `CustomEvent<${e.type ?? 'unknown'}>` }, description: e.description })),
        cssParts: doc.parts.map((p) => ({ name: p.name, description: p.description })),
      }],
      exports: [
        { kind: 'js', name: className, declaration: { name: className, module: modulePath } },
        { kind: 'custom-element-definition', name: cls.tag, declaration: { name: className, module: modulePath } },
      ],
    });
  }
  const manifest = { schemaVersion: '1.0.0', readme: 'docs/install.md', modules };
  return { manifest: `${JSON.stringify(manifest, null, 2)}\n`, types: typesText(manifest), frameworks: frameworkTypes(manifest), classes };
}

/** The element declarations of a manifest, in its order. */
const declarationsOf = (manifest) => manifest.modules.map((m) => m.declarations[0]);

/** The .d.ts of the elements (headlab-components.d.ts), from the manifest alone. */
export function typesText(manifest) {
  const out = [
    '// Written by scripts/custom-elements.mjs from custom-elements.json (itself from the elements\' sources): do not edit by hand.',
    '// The npm package\'s components/index.d.ts: `import \'headlab/components\'` (every element, loaded on',
    '// first use) or `import \'headlab/components/<name>\'` (one), with each tag in HTMLElementTagNameMap.',
    '// Per element: its class (attributes mirrored as properties, read-only properties, methods, typed',
    '// addEventListener), its events (<Class>Events: each CustomEvent\'s detail) and its markup attributes',
    '// (<Class>Attributes, what JSX, Vue and Svelte type: headlab/components/react, /vue, /svelte, /preact).',
    '// (In the package, components/index.d.ts imports \'../web/lib/headlab.js\'.)',
    'import type { CreateHeadlabOptions, Headlab } from \'../lib/headlab.js\';',
    '',
  ];
  for (const d of declarationsOf(manifest)) {
    const { name: className, tagName: tag } = d;
    out.push(`/** The events <${tag}> dispatches (bubbling, composed CustomEvents), by name. */`);
    out.push(`export interface ${className}Events {`);
    for (const e of d.events) {
      if (e.description) out.push(`  /** ${comment(e.description)} */`);
      out.push(`  '${e.name}': ${e.type.text};`);
    }
    out.push('}');
    out.push(`/** Every event a listener on <${tag}> sees: its own and HTMLElement's. */`);
    out.push(`export interface ${className}EventMap extends HTMLElementEventMap, ${className}Events {}`);
    out.push(`/** The attributes of <${tag}> in markup (HTMLElement's own, such as id and class, come from each framework). */`);
    out.push(`export interface ${className}Attributes {`);
    // Every attribute but lang, which each framework's HTML attributes type; one that shares a platform name
    // (<headlab-misconceptions part="b">) narrows that framework's type.
    for (const a of d.attributes.filter((x) => x.name !== 'lang')) {
      if (a.description) out.push(`  /** ${comment(a.description)} */`);
      out.push(`  '${a.name}'?: ${attributeTypeText(a.type.text)};`);
    }
    out.push('}');
    out.push(`/** <${tag}>: ${comment(d.description)} */`);
    out.push(`export declare class ${className} extends HTMLElement {`);
    for (const m of d.members.filter((x) => x.kind === 'field' && !INHERITED.has(x.name))) {
      if (m.description) out.push(`  /** ${comment(m.description)}${m.attribute ? ` (attribute \`${m.attribute}\`)` : ''} */`);
      out.push(`  ${m.readonly ? 'readonly ' : ''}${m.name}: ${m.type.text};`);
    }
    for (const m of d.members.filter((x) => x.kind === 'method')) {
      if (m.description) out.push(`  /** ${comment(m.description)} */`);
      out.push(`  ${m.name}(${m.parameters.map((p) => `${p.name}${p.optional ? '?' : ''}: ${p.type.text}`).join(', ')}): ${m.return.type.text};`);
    }
    for (const verb of ['add', 'remove']) {
      const options = verb === 'add' ? 'boolean | AddEventListenerOptions' : 'boolean | EventListenerOptions';
      out.push(`  ${verb}EventListener<K extends keyof ${className}EventMap>(type: K, listener: (this: ${className}, event: ${className}EventMap[K]) => unknown, options?: ${options}): void;`);
      out.push(`  ${verb}EventListener(type: string, listener: EventListenerOrEventListenerObject, options?: ${options}): void;`);
    }
    out.push('}');
    out.push(`/** The names of the events <${tag}> dispatches. */`);
    out.push(`export type ${className}EventType = keyof ${className}Events;`);
    out.push('');
  }
  const all = declarationsOf(manifest);
  out.push('/** Every HeadLab tag, in the order of the site. */');
  out.push(`export declare const tags: readonly (${all.map(({ tagName }) => `'${tagName}'`).join(' | ')})[];`);
  out.push('/**');
  out.push(' * Loads and registers one element (once); for elements the document watcher cannot see (inside shadow roots).');
  out.push(' * Rejects where there is no DOM (a server): there the tag is rendered as HTML and the browser loads its code.');
  out.push(' */');
  out.push('export declare function loadElement<K extends (typeof tags)[number]>(tag: K): Promise<Record<string, CustomElementConstructor>>;');
  out.push('/** createHeadlab of \'headlab\'; without options, the instance the elements use (one per page). */');
  out.push('export declare function createHeadlab(options?: CreateHeadlabOptions): Promise<Headlab>;');
  out.push('');
  out.push('declare global {');
  out.push('  interface HTMLElementTagNameMap {');
  for (const { name, tagName } of all) out.push(`    '${tagName}': ${name};`);
  out.push('  }');
  out.push('}');
  return `${out.join('\n')}\n`;
}

/**
 * Each framework's typing of the tags, from the manifest: text of web/components/types/<framework>.d.ts,
 * the package's components/<framework>.d.ts (with components/<framework>.js, which registers every element).
 * React 19 sets a prop as a property when the element has one and as an attribute otherwise, and an
 * `on<event>` prop function as a listener of <event>; an element loaded on first use has no properties
 * yet at the first render, so the typed props are the attributes' names, which work either way.
 */
export function frameworkTypes(manifest) {
  const all = declarationsOf(manifest);
  const head = (framework, how) => [
    '// Written by scripts/custom-elements.mjs from custom-elements.json: do not edit by hand.',
    `// ${how}`,
    '// Importing this module registers every element too (as \'headlab/components\' does).',
    "export * from '../headlab-components.js';",
    `import type { ${all.flatMap(({ name }) => [name, `${name}Attributes`, `${name}Events`]).join(', ')} } from '../headlab-components.js';`,
    '',
  ];
  const react = [
    ...head('react', "React 19 JSX: `import 'headlab/components/react';` once in the app (a .tsx or a .d.ts) types each tag's attributes, ref and on<event> props."),
    '/** React 19 listens to `on<event name>` props on custom elements: onheadlab-step={(e) => e.detail.step}. */',
    'type Listeners<E> = { [K in keyof E as `on${K & string}`]?: (event: E[K]) => void };',
    '',
    "declare module 'react' {",
    '  namespace JSX {',
    '    interface IntrinsicElements {',
    ...all.map(({ name, tagName }) => `      '${tagName}': DetailedHTMLProps<HTMLAttributes<${name}>, ${name}> & ${name}Attributes & Listeners<${name}Events>;`),
    '    }',
    '  }',
    '}',
  ];
  const vue = [
    ...head('vue', "Vue 3: `import 'headlab/components/vue';` types each tag's attributes in templates (GlobalComponents; Volar / vue-tsc)."),
    "import type { DefineComponent } from 'vue';",
    '',
    "declare module 'vue' {",
    '  interface GlobalComponents {',
    ...all.map(({ name, tagName }) => `    '${tagName}': DefineComponent<${name}Attributes>;`),
    '  }',
    '}',
  ];
  const svelte = [
    ...head('svelte', "Svelte: `import 'headlab/components/svelte';` types each tag's attributes and events (svelte-check)."),
    "import type { HTMLAttributes as SvelteHTMLAttributes } from 'svelte/elements';",
    '',
    '/** Svelte 5 listens to on<event name> attributes, Svelte 4 to on:<event name>. */',
    'type Listeners<E> = { [K in keyof E as `on${K & string}` | `on:${K & string}`]?: (event: E[K]) => void };',
    '',
    'declare global {',
    '  namespace svelteHTML {',
    '    interface IntrinsicElements {',
    ...all.map(({ name, tagName }) => `      '${tagName}': SvelteHTMLAttributes<${name}> & ${name}Attributes & Listeners<${name}Events>;`),
    '    }',
    '  }',
    '}',
  ];
  const preact = [
    ...head('preact', "Preact 11 JSX: `import 'headlab/components/preact';` types each tag's attributes, ref and on<event> props."),
    "import type { HTMLAttributes as PreactHTMLAttributes } from 'preact';",
    '',
    '/** Preact listens to `on<event name>` props: onheadlab-step={(e) => e.detail.step}. */',
    'type Listeners<E> = { [K in keyof E as `on${K & string}`]?: (event: E[K]) => void };',
    '',
    "declare module 'preact' {",
    '  namespace JSX {',
    '    interface IntrinsicElements {',
    ...all.map(({ name, tagName }) => `      '${tagName}': PreactHTMLAttributes<${name}> & ${name}Attributes & Listeners<${name}Events>;`),
    '    }',
    '  }',
    '}',
  ];
  return Object.fromEntries(Object.entries({ react, vue, svelte, preact }).map(([k, v]) => [k, `${v.join('\n')}\n`]));
}
