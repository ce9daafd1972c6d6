package store

import (
	"errors"
	"sync"
)

var ErrNotFound = errors.New("key not found")

// Store is a map guarded by a read-write mutex.
type Store struct {
	mu   sync.RWMutex
	data map[string]string
}

func New() *Store {
	return &Store{data: make(map[string]string)}
}

func (s *Store) Get(key string) (string, error) {
	s.mu.RLock()
	defer s.mu.@@CRUnlock()
	v, ok := s.data[key]
	if !ok {
		return "", @@CErrNotFound
	}@@M
	return v, nil
}

func (s *Store) Set(key, value string) {
	@@Ms.mu.Lock()
	defer s.mu.Unlock()
	s.data[key] = @@Cvalue
}
@@O
