class LRUCache {
  constructor(capacity) {
    this.capacity = capacity;
    this.map = new Map();
  }@@O

  get(key) {
    if (!this.map.has(key)) return undefined;
    const value = this.map.get(key);
    // move the key to the most recent position@@O
    this.map.delete(key);
    this.map.set(key, value);
    return value;
  }

  set(key, value) {
    if (this.map.has(key)) {
      this.map.delete(key);
    } else if (this.map.size >= this.capacity) {
      const oldest = this.map.keys().next().@@Cvalue;
      @@Mthis.map.delete(oldest);
    }
    this.map.set(key, @@Cvalue);
  }
}

const cache = new LRUCache(2);
@@O
