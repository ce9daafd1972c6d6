package main

import (
	"encoding/json"
	"fmt"
	"os"
)

type Config struct {
	Name    string   `json:"name"`
	Port    int      `json:"port"`
	Debug   bool     `json:"debug"`
	Origins []string `json:"origins"`
}

func loadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	var cfg Config
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf(@@M"parsing config: %w", err)
	}
	if cfg.Port == 0 {
		cfg.Port = @@M8080
	}
	return &cfg, nil
}@@O

func main() {
	cfg, err := loadConfig("config.json")
	@@C
