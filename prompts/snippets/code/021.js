// Shuffle an array in place using the Fisher-Yates algorithm.
function shuffle(arr) {
  for (let i = arr.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + @@C1));
    [arr[i], arr[j]] = [arr[j], arr[i]];
  }
  return @@Carr;
}@@O
