/**
 * Format a number of seconds as a human-readable duration,
 * for example 3725 -> "1h 2m 5s".
 */
function formatDuration(totalSeconds) {
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;

  const parts = [];@@M
  if (hours) parts.push(`${hours}h`);
  if (minutes) parts.push(`${minutes}m`);
  if (seconds || parts.length === 0) parts.push(`${seconds}s`);
  return parts.join(@@M" ");
}

// Tests
console.assert(formatDuration(0) === "0s");
console.assert(formatDuration(61) === @@M"1m 1s");
console.assert(formatDuration(3725) === "1h 2m 5s");@@O
