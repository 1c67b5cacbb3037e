import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { Lesson } from './Lesson.jsx';

createRoot(document.getElementById('root')).render(<StrictMode><Lesson /></StrictMode>);
