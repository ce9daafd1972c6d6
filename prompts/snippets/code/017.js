async function loadUsers() {
  const response = await fetch("/api/users");@@M
  if (!response.ok) {
    throw new Error(`Request failed with status ${response.status}`);
  }
  const users = await response.@@Cjson();@@M
  return users.filter((u) => u.@@Mactive);
}
