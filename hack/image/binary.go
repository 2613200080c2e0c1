package main

import (
	"debug/elf"
	"fmt"
)

// elfMachines maps the architectures the image can be built for to the
// ELF machine their binaries carry.
var elfMachines = map[string]elf.Machine{
	"amd64": elf.EM_X86_64,
	"arm64": elf.EM_AARCH64,
}

// checkBinary fails unless path is a statically linked Linux ELF binary
// for arch: the image has no libc or loader, so anything else cannot start.
func checkBinary(path, arch string) error {
	want, ok := elfMachines[arch]
	if !ok {
		return fmt.Errorf("unsupported architecture %q (supported: amd64, arm64)", arch)
	}
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s: not an ELF binary: %w", path, err)
	}
	defer func() { _ = f.Close() }()
	if f.Machine != want {
		return fmt.Errorf("%s is built for %s, not %s: build it with GOARCH=%s", path, f.Machine, arch, arch)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked: build it with CGO_ENABLED=0", path)
		}
	}
	return nil
}
