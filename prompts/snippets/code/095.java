import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

public class InventoryService {
    private final Map<String, Integer> stock = new HashMap<>();

    public void receive(String sku, int quantity) {
        if (quantity <= 0) {
            throw new IllegalArgumentException("quantity must be positive");
        }
        stock.merge(sku, quantity, Integer::@@Csum);
    }

    public boolean ship(String sku, int quantity) {@@O
        int available = stock.getOrDefault(sku, 0);
        if (available < quantity) {
            return @@Cfalse;
        }
        stock.put(sku, available - quantity);@@M
        @@Oreturn true;
    }

    public Optional<Integer> level(String sku) {
        return Optional.ofNullable(stock.get(@@Csku));
    }
@@O
