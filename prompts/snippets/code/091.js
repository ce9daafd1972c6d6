// Minimal client-side router for a single-page app.
const routes = {
  "/": renderHome,
  "/about": renderAbout,
  "/posts": renderPosts,
};

function navigate(path) {
  window.history.pushState({}, "", path);
  render(path);
}

function render(path) {
  const view = routes[path] || renderNotFound;
  const root = document.getElementById("root");
  root.innerHTML = "";@@O
  root.appendChild(view());
}

window.addEventListener("popstate", () => render(window.location.@@Cpathname));

document.addEventListener("click", (event) => {
  const link = event.target.closest("a[data-link]");
  if (!link) return;
  @@Mevent.preventDefault();
  navigate(link.getAttribute("href"));
});
@@O
