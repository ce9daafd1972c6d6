// Debounce: run fn only after the caller has been quiet for `wait` ms.
function debounce(fn, wait) {
  let timer = null;@@M
  return function (...args) {
    clearTimeout(timer);
    timer = setTimeout(() => fn.apply(this, @@Cargs), wait);
  };
}@@O
