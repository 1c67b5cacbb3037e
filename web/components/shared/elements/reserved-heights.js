// Written by scripts/element-heights.mjs from the built elements: each element's height (px) once
// drawn, as [width, height] pairs, default attributes and `compact`. Rerun it after changing an
// element's layout (tests/browser/first-picture.test.mjs measures the layout shift it prevents).
export const RESERVED_HEIGHTS = {};
