import { createHeadlab } from 'headlab';
import 'headlab/components';   // defines every element; each one's code loads when the page first uses it
import { createRoot } from 'react-dom/client';
import { locateFile } from './wasm-files.js';
import Lesson from './lesson.mdx';

// The page's one HeadLab instance, made before any element connects: the elements and the
// React component share it (createHeadlab() is cached), so they find the .wasm files
// esbuild emitted (src/wasm-files.js) and each is fetched once.
createHeadlab({ locateFile });
createRoot(document.getElementById('root')).render(<Lesson />);
