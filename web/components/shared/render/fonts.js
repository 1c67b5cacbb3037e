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
  style.textContent = fontFaces.split('url(fonts/').join(`url(${BASE_URL}katex/fonts/`);
  (document.head ?? document.documentElement).append(style);
}

/**
 * Resolves once the fonts that `element`'s formulas use have loaded, or after `ms` (a slow or
 * blocked font must not hide them for long; they are then shown in the fallback fonts): the
 * element is laid out first, which asks for each font its shown formulas need.
 */
export function formulaFontsReady(element, ms = 3000) {
  if (typeof document === 'undefined' || !document.fonts?.load) return Promise.resolve();
  void element.getBoundingClientRect();  // layout: the faces its text needs start loading
  const faces = ['16px KaTeX_Main', 'italic 16px KaTeX_Math'].map((f) => document.fonts.load(f).catch(() => {}));
  const loaded = Promise.all(faces).then(() => document.fonts.ready);
  return Promise.race([loaded, new Promise((resolve) => setTimeout(resolve, ms))]);
}
