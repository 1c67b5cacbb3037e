// Messages both training elements (<headlab-trainer>, <headlab-language-model>) use: the run
// bar's Start button, where training runs, the charts' step axis (components/shared/elements/
// training-element.js). What is announced when training starts and pauses is in shared.js.

export default {
  en: {
    'training.start': 'Start',
    'training.pause': 'Pause',
    'training.continue': 'Continue',
    'training.stopped': 'Training stopped.',
    'training.step': 'training step',
    'training.modeWorker': 'Training runs in a Web Worker, so the page stays responsive.',
    'training.modeMain': 'Training runs on the page itself (its main thread), in short bursts between frames: {reason}. The page may feel slower while it works.',
    'training.modeMainModel': 'The model runs on the page itself (its main thread), in short bursts between frames: {reason}. The page may feel slower while it works.',
    'training.modeThreads': 'Training runs in a Web Worker, each step\'s batch split over {n} threads (this page is cross-origin isolated), so the page stays responsive.',
  },
  es: {
    'training.start': 'Empezar',
    'training.pause': 'Pausar',
    'training.continue': 'Continuar',
    'training.stopped': 'El entrenamiento se detuvo.',
    'training.step': 'paso de entrenamiento',
    'training.modeWorker': 'El entrenamiento se hace en un Web Worker, así que la página sigue respondiendo.',
    'training.modeMain': 'El entrenamiento se hace en la propia página (su hilo principal), en ráfagas cortas entre fotogramas: {reason}. La página puede ir más lenta mientras trabaja.',
    'training.modeMainModel': 'El modelo se ejecuta en la propia página (su hilo principal), en ráfagas cortas entre fotogramas: {reason}. La página puede ir más lenta mientras trabaja.',
    'training.modeThreads': 'El entrenamiento se hace en un Web Worker y el lote de cada paso se reparte entre {n} hilos (esta página está aislada entre orígenes), así que la página sigue respondiendo.',
  },
};
