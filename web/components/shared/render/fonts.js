// KaTeX's fonts for the elements that typeset formulas (typeset.js): its @font-face rules must
// live in the document, because font faces declared inside a shadow root are ignored. They point
// at the woff2 files shipped in dist/katex/fonts/. Apart from KaTeX itself, so that elements
// without formulas load neither.

import { fontFaces } from 'headlab:katex-fonts';
import { BASE_URL } from '../lab/assets.js';

let fontsInstalled = false;

/** Adds KaTeX's font faces to the document once per page. */
export function installFonts() {
  if (fontsInstalled || typeof document === 'undefined') return;
  fontsInstalled = true;
  if (document.querySelector('style[data-headlab-fonts]')) return;
  const style = document.createElement('style');
  style.dataset.headlabFonts = '';
  // Faces headlab-components.js declared already (to fetch them early) are not declared twice.
  const early = (document.querySelector('style[data-headlab-fonts-early]')?.dataset.headlabFontsEarly ?? '').split(' ').filter(Boolean);
  style.textContent = fontFaces.split('\n').filter((rule) => !early.some((file) => rule.includes(`/${file}.woff2`)))
    .join('\n').split('url(fonts/').join(`url(${BASE_URL}katex/fonts/`);
  (document.head ?? document.documentElement).append(style);
}

/**
 * Resolves when the KaTeX fonts the elements use have loaded, or after `ms`
 * (a slow or blocked font must not hold a demo back): drawing before they
 * arrive makes every formula, and what is below it, move when they do.
 */
export function fontsReady(ms = 1500) {
  if (typeof document === 'undefined' || !document.fonts?.load) return Promise.resolve();
  const faces = ['KaTeX_Main', 'KaTeX_Math'].map((f) => document.fonts.load(`16px ${f}`).catch(() => {}));
  return Promise.race([Promise.all(faces), new Promise((resolve) => setTimeout(resolve, ms))]);
}
