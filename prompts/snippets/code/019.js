class EventEmitter {
  constructor() {
    this.listeners = {};
  }

  on(name, handler) {
    (this.listeners[name] ||= []).push(handler);
    return this;
  }

  emit(name, ...args) {@@O
    for (const handler of this.listeners[name] || @@C[]) {
      handler(...args);
    }
  }
}@@O
