import { createRoot } from 'react-dom/client';
import Lesson from './lesson.mdx';

createRoot(document.getElementById('root')).render(<Lesson />);
