const prices = [12.5, 8, 30, 4.25];
const total = prices.reduce((sum, p) => sum + p, @@C0);
const expensive = prices.filter((p) => p > @@M10);
console.log(`Total: ${total.toFixed(@@C2)}`);
