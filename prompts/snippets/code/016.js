const button = document.querySelector("#submit");
const form = document.getElementById(@@M"signup-form");

button.addEventListener("@@Cclick", (event) => {
  event.preventDefault();
  const data = new FormData(form);
  @@O
});
