// Records what goes wrong in a page into window.__headlabErrors, for engines whose
// automation protocol has no console or error events (WebDriver classic) and for the
// ones that have them, so that every engine reports the same things: window `error`
// events (uncaught exceptions, resources that fail to load), unhandled promise
// rejections, console.error / console.warn calls, Content-Security-Policy violations
// and errors of the page's Workers. The test server adds it as the first script of
// every HTML page (tools/serve.mjs `inject`); tests read the list back.
(function () {
  'use strict';
  if (window.__headlabErrors) return;
  var errors = [];
  window.__headlabErrors = errors;
  var text = function (value) {
    if (value instanceof Error) return value.stack && value.stack.indexOf(value.message) >= 0 ? value.stack : value.name + ': ' + value.message;
    if (typeof value === 'string') return value;
    try { return JSON.stringify(value); } catch { return String(value); }
  };
  var where = function (e) { return e.filename ? ' (' + e.filename + ':' + e.lineno + ':' + e.colno + ')' : ''; };
  window.addEventListener('error', function (e) {
    var target = e.target;
    if (target && target !== window && target.localName) {
      errors.push('failed to load <' + target.localName + '> ' + (target.src || target.href || ''));
    } else {
      errors.push('window error: ' + (e.error ? text(e.error) : e.message) + where(e));
    }
  }, true);
  window.addEventListener('unhandledrejection', function (e) {
    errors.push('unhandled rejection: ' + text(e.reason));
  });
  document.addEventListener('securitypolicyviolation', function (e) {
    errors.push('CSP violation: ' + e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline code') + where({ filename: e.sourceFile, lineno: e.lineNumber, colno: e.columnNumber }));
  });
  ['error', 'warn'].forEach(function (level) {
    var original = console[level];
    console[level] = function () {
      errors.push('console.' + level + ': ' + Array.prototype.map.call(arguments, text).join(' '));
      return original.apply(this, arguments);
    };
  });
  if (typeof window.Worker === 'function') {
    var NativeWorker = window.Worker;
    var Worker = function Worker(url, options) {
      var worker = new NativeWorker(url, options);
      worker.addEventListener('error', function (e) {
        errors.push('worker error: ' + (e.message || 'an error in ' + url) + where(e));
      });
      worker.addEventListener('messageerror', function () {
        errors.push('worker messageerror: a message from ' + url + ' could not be deserialised');
      });
      return worker;
    };
    Worker.prototype = NativeWorker.prototype;
    window.Worker = Worker;
  }
})();
