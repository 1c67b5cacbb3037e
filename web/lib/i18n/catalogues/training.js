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
    'training.reasonCsp': 'this page’s Content-Security-Policy does not allow blob: Workers (worker-src), which HeadLab needs to start a Worker from another origin',
    'training.modeThreads': 'Training runs in a Web Worker, each step\'s batch split over {n} threads (this page is cross-origin isolated), so the page stays responsive.',
    'training.reasonFile': 'opened from a file, and browsers do not start Workers from file://',
    'training.reasonNoWorkers': 'this browser has no Web Workers',
    'training.reasonOrigin': 'the HeadLab script comes from another origin than the page, and Workers must be same-origin',
    'training.reasonScript': 'the trainer Worker script could not be loaded',
    'training.reasonWasm': 'the Worker could not load WebAssembly ({detail})',
    'training.reasonOther': '{detail}',
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
    'training.reasonCsp': 'la Content-Security-Policy de esta página no permite Workers blob: (worker-src), que HeadLab necesita para iniciar un Worker desde otro origen',
    'training.modeThreads': 'El entrenamiento se hace en un Web Worker y el lote de cada paso se reparte entre {n} hilos (esta página está aislada entre orígenes), así que la página sigue respondiendo.',
    'training.reasonFile': 'la página se abrió desde un archivo, y los navegadores no inician Workers desde file://',
    'training.reasonNoWorkers': 'este navegador no tiene Web Workers',
    'training.reasonOrigin': 'el script de HeadLab viene de un origen distinto del de la página, y los Workers deben ser del mismo origen',
    'training.reasonScript': 'no se pudo cargar el script del Worker',
    'training.reasonWasm': 'el Worker no pudo cargar WebAssembly ({detail})',
    'training.reasonOther': 'no se pudo iniciar ningún Worker ({detail})',
  },
};
