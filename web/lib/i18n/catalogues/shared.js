// Messages every HeadLab element uses: attribute notes, load failures, the copy-link
// button, download menus, scroll hints, heatmaps and chart labels.

export default {
  en: {
    'attr.range': '{min} to {max}',
    'attr.notWhole': '{attr} is not a whole number ({range}); using the default.',
    'attr.notWholeDefault': '{attr} is not a whole number ({range}); using the default, {default}.',
    'attr.notNumber': '{attr} is not a number ({range}); using the default.',
    'attr.notNumberDefault': '{attr} is not a number ({range}); using the default, {default}.',
    'attr.below': '{attr} is below {limit}; using {limit}.',
    'attr.above': '{attr} is above {limit}; using {limit}.',
    'attr.notOneOf': '{attr} is not one of {values}; using the default, {default}.',

    'load.failed': 'This demo could not start: {what} did not load.',
    'load.whatModule': 'its WebAssembly module ({file})',
    'load.whatChunk': 'part of its code',
    'load.whatChunkNamed': 'part of its code ({chunk})',
    'load.everyChunk': 'every headlab-chunk-*.js file',
    'load.adviceCrossOrigin': 'For the course author: HeadLab is served from {origin}, another origin than this page, and that server did not allow this page to load it. Serve every HeadLab file with the header Access-Control-Allow-Origin, or load headlab-components.classic.js instead, which works from any origin (HeadLab docs/embedding.md, “Embedding from another origin”).',
    'load.adviceSameOrigin': 'The file may be missing, cut short or blocked. Reloading the page may help; if you run the site, check that {file} sits next to headlab-components.js and is served in full.',
    'load.details': 'Details: {detail}',
    'load.noReason': 'no reason given',
    'element.drawFailed': 'Something went wrong while drawing this demo: {message}',
    'element.experimentFailed': 'HeadLab could not run the experiment: {message}',

    'list.sep': ', ',
    'percent': '{n}%',
    'chart.logCount': ' (log of count)',

    'training.started': 'Training started.',
    'training.held': 'Paused at step {step}: the settings above cannot train. Training goes on once they can.',
    'training.limit': 'Stopped at step {step}, the end of a round of {maxSteps} steps. Continue trains {maxSteps} more.',
    'training.paused': 'Paused at step {step}.',
    'training.curves': '{title} curves',
    'training.failed': 'HeadLab could not do that.',

    'copyLink.button': 'Copy link',
    'copyLink.field': 'Link to this state of the demo',
    'copyLink.copied': 'Link copied.',
    'copyLink.byHand': 'Copy the link from the field.',

    'export.summary': 'Download',
    'export.as': 'Download {what} as {format}',
    'export.group': 'Download {what}',

    'scroll.label': '{caption} (scrolls sideways)',
    'scroll.table': 'Table',
    'scroll.hint': 'Scroll sideways for more →',

    'heatmap.show': 'Show numbers',
    'heatmap.hide': 'Hide numbers',
    'heatmap.query': 'query',
    'heatmap.key': 'key',
    'heatmap.legend': 'attention weight',
    'heatmap.caption': '{title} (rows: {rows}, columns: {cols})',
    'heatmap.readout': '{rows} “{row}” → {cols} “{col}”: {value}',
    'heatmap.tooMany': '{rows} × {cols} numbers are too many for a table here; use Download → CSV.',

    'compute.worker': 'Long calculations run in the background (a Web Worker), so the page stays responsive.',
    'compute.file': 'Opened from a file, so calculations run on the page itself (the main thread): browsers start no background workers for files.',
    'compute.main': 'Everything runs on this page’s main thread (HeadLab comes from another site, and browsers only start helper threads from the page’s own site).',
  },
  es: {
    'attr.range': 'de {min} a {max}',
    'attr.notWhole': '{attr} no es un número entero ({range}); se usa el valor predeterminado.',
    'attr.notWholeDefault': '{attr} no es un número entero ({range}); se usa el valor predeterminado, {default}.',
    'attr.notNumber': '{attr} no es un número ({range}); se usa el valor predeterminado.',
    'attr.notNumberDefault': '{attr} no es un número ({range}); se usa el valor predeterminado, {default}.',
    'attr.below': '{attr} es menor que {limit}; se usa {limit}.',
    'attr.above': '{attr} es mayor que {limit}; se usa {limit}.',
    'attr.notOneOf': '{attr} no es ninguno de estos valores: {values}; se usa el predeterminado, {default}.',

    'load.failed': 'Esta demostración no pudo arrancar: no se cargó {what}.',
    'load.whatModule': 'su módulo WebAssembly ({file})',
    'load.whatChunk': 'una parte de su código',
    'load.whatChunkNamed': 'una parte de su código ({chunk})',
    'load.everyChunk': 'cada archivo headlab-chunk-*.js',
    'load.adviceCrossOrigin': 'Para quien prepara el curso: HeadLab se sirve desde {origin}, un origen distinto del de esta página, y ese servidor no le permitió cargarlo. Sirva todos los archivos de HeadLab con la cabecera Access-Control-Allow-Origin, o cargue en su lugar headlab-components.classic.js, que funciona desde cualquier origen (documentación de HeadLab, docs/embedding.md, «Embedding from another origin»).',
    'load.adviceSameOrigin': 'Puede que el archivo falte, esté incompleto o esté bloqueado. Recargar la página puede ayudar; si administra el sitio, compruebe que {file} está junto a headlab-components.js y se sirve completo.',
    'load.details': 'Detalles: {detail}',
    'load.noReason': 'no se indicó ningún motivo',
    'element.drawFailed': 'Algo falló al dibujar esta demostración: {message}',
    'element.experimentFailed': 'HeadLab no pudo realizar el experimento: {message}',

    // Numbers are written with a decimal comma, so a list of them is separated by semicolons.
    'list.sep': '; ',
    'percent': '{n}\u00a0%',
    'chart.logCount': ' (recuento en escala logarítmica)',

    'training.started': 'Entrenamiento iniciado.',
    'training.held': 'En pausa en el paso {step}: con los ajustes de arriba no se puede entrenar. El entrenamiento seguirá en cuanto se pueda.',
    'training.limit': 'Detenido en el paso {step}, al final de una tanda de {maxSteps} pasos. «Continuar» entrena {maxSteps} más.',
    'training.paused': 'En pausa en el paso {step}.',
    'training.curves': 'curvas de {title}',
    'training.failed': 'HeadLab no pudo hacerlo.',

    'copyLink.button': 'Copiar enlace',
    'copyLink.field': 'Enlace a este estado de la demostración',
    'copyLink.copied': 'Enlace copiado.',
    'copyLink.byHand': 'Copie el enlace desde el campo.',

    'export.summary': 'Descargar',
    'export.as': 'Descargar {what} como {format}',
    'export.group': 'Descargar {what}',

    'scroll.label': '{caption} (se desplaza en horizontal)',
    'scroll.table': 'Tabla',
    'scroll.hint': 'Desplácese en horizontal para ver más →',

    'heatmap.show': 'Mostrar números',
    'heatmap.hide': 'Ocultar números',
    'heatmap.query': 'consulta',
    'heatmap.key': 'clave',
    'heatmap.legend': 'peso de atención',
    'heatmap.caption': '{title} (filas: {rows}; columnas: {cols})',
    'heatmap.readout': '{rows} «{row}» → {cols} «{col}»: {value}',
    'heatmap.tooMany': '{rows} × {cols} números son demasiados para una tabla aquí; use Descargar → CSV.',

    'compute.worker': 'Los cálculos largos se hacen en segundo plano (en un Web Worker), así que la página sigue respondiendo.',
    'compute.file': 'La página se abrió desde un archivo, así que los cálculos se hacen en la propia página (el hilo principal): los navegadores no inician trabajadores en segundo plano para archivos.',
    'compute.main': 'Todo se calcula en el hilo principal de esta página (HeadLab viene de otro sitio, y los navegadores solo inician hilos auxiliares desde el sitio de la propia página).',
  },
};
