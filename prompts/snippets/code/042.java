public interface Shape {
    double area();
}

public class Circle implements Shape {
    private final double radius;@@M

    public Circle(double radius) {
        this.radius = radius;
    }

    @Override
    public double area() {
        return Math.PI * radius * @@Cradius;
    }
}
