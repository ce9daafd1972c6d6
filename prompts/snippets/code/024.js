for (let i = 0; i < @@Mitems.length; i++) {
  if (items[i].id === targetId) {
    @@Oreturn i;
  }
}
return -@@C1;
