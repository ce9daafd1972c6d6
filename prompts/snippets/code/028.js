localStorage.setItem("theme", "dark");
const theme = localStorage.getItem(@@C"theme");
document.body.classList.@@Mtoggle("dark", theme === "dark");
