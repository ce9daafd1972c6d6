const canvas = document.getElementById("chart");
const ctx = canvas.getContext("2d");
const values = [4, 9, 2, 7, 5, 11, 3];
const barWidth = canvas.width / values.length;
const maxValue = Math.max(...values);@@O

ctx.clearRect(0, 0, canvas.width, canvas.height);
values.forEach((v, i) => {
  const h = (v / maxValue) * (canvas.height - 20);
  ctx.fillStyle = i % 2 ? "#4a90d9" : "#7bb3ea";
  ctx.fillRect(i * barWidth + 4, canvas.height - h, barWidth - 8, @@Mh);
  ctx.fillStyle = "#222";
  ctx.fillText(String(v), i * barWidth + barWidth / 2 - 4, canvas.height - h - @@M4);
});@@O
