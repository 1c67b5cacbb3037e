import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { WorkedExample } from './WorkedExample.jsx';

createRoot(document.getElementById('root')).render(<StrictMode><WorkedExample /></StrictMode>);
