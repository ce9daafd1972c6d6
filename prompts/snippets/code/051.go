type Rectangle struct {
	Width, Height float64
}

func (r Rectangle) Area() float64 {
	return r.Width * r.@@CHeight
}

func (r Rectangle) Perimeter() float64 {
	return 2 * (r.Width + @@Cr.Height)
}
@@O
