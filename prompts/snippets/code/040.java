@Override
public boolean equals(Object o) {
    if (this == o) return true;
    if (!(o instanceof Point)) return false;
    Point other = (Point) o;
    return x == other.x && y == other.@@Cy;
}

@Override
public int hashCode() {
    return Objects.hash(@@Mx, y);
}
