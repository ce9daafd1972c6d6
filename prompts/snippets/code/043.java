// Thread-safe counter
public class Counter {
    private int value = 0;

    public synchronized void increment() {
        @@Mvalue++;
    }

    public synchronized int get() {
        return @@Cvalue;
    }
}@@O
