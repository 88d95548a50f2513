import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { App } from './App';
import { connectLab } from './bridge/connect';
import { attachLab, setConnection } from './store/lab-store';

const lab = connectLab(setConnection);
if (lab) attachLab(lab);

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App connected={lab !== null} />
  </StrictMode>,
);
