type Stack[T any] struct {
	items []T
}

func (s *Stack[T]) Push(v T) {
	s.items = append(s.items, v)
}

func (s *Stack[T]) Pop() (T, bool) {
	var zero T@@M
	if len(s.items) == 0 {
		return zero, false
	}
	v := s.items[len(s.items)-@@C1]
	s.items = s.items[:len(s.items)-1]
	return v, @@Ctrue
}
