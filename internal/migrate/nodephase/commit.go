package nodephase

import (
	"fmt"
	"os"
	"path"
	"slices"
)

// commit writes the plan. Each file's backup and the state naming what is
// about to be written are saved before the file itself, so a crash at any
// point leaves files the next run accepts as the tool's.
func (p *plan) commit(fsys nodeFS) error {
	st := p.st
	for _, f := range p.files {
		if f.action == ActionUnchanged {
			continue
		}
		e := f.entry
		if e == nil {
			e = &fileState{Path: f.path, Scope: f.scope, Existed: f.cur.exists}
			if f.cur.exists {
				e.SHA256, e.Mode, e.Backup = hashOf(f.cur.data), formatMode(f.cur.mode), backupPath(f.path)
				if err := fsys.mkdirPrivate(path.Dir(e.Backup)); err != nil {
					return err
				}
				if err := fsys.writeAtomic(e.Backup, f.cur.data, f.cur.mode); err != nil {
					return fmt.Errorf("back up %s: %w", f.path, err)
				}
			}
			st.Files = append(st.Files, e)
			f.entry = e
		}
		for _, v := range f.variables {
			if !slices.Contains(e.Variables, v) {
				e.Variables = append(e.Variables, v)
			}
		}
		if !f.target.exists {
			if err := fsys.saveState(st); err != nil {
				return err
			}
			if err := fsys.remove(f.path); err != nil {
				return err
			}
			if err := p.pruneDirs(fsys, f.path); err != nil {
				return err
			}
			continue
		}
		if h := hashOf(f.target.data); h != e.SHA256 && !slices.Contains(e.Written, h) {
			e.Written = append(e.Written, h)
		}
		dir := path.Dir(f.path)
		for _, d := range fsys.missingDirs(dir) {
			if !slices.Contains(st.CreatedDirs, d) {
				st.CreatedDirs = append(st.CreatedDirs, d)
			}
		}
		if err := fsys.saveState(st); err != nil {
			return err
		}
		if err := fsys.mkdirAll(dir); err != nil {
			return err
		}
		if err := fsys.writeAtomic(f.path, f.target.data, f.fileMode()); err != nil {
			return err
		}
	}
	if p.o.Phase == PhaseRestore {
		return p.forget(fsys)
	}
	return fsys.saveState(st)
}

// pruneDirs removes the empty directories the tool created above a file it
// removed (never the state directory's).
func (p *plan) pruneDirs(fsys nodeFS, file string) error {
	st := p.st
	for i := len(st.CreatedDirs) - 1; i >= 0; i-- {
		d := st.CreatedDirs[i]
		if !isUnder(file, d) || isUnder(StateDir, d) {
			continue
		}
		removed, err := fsys.removeEmptyDir(d)
		if err != nil {
			return err
		}
		if removed {
			st.CreatedDirs = slices.Delete(st.CreatedDirs, i, i+1)
		}
	}
	return fsys.saveState(st)
}

// forget drops the restored files from the state with their backups. With
// nothing left, it removes the state directory and every directory the
// tool created: no trace remains.
func (p *plan) forget(fsys nodeFS) error {
	st := p.st
	for _, f := range p.files {
		st.Files = slices.DeleteFunc(st.Files, func(e *fileState) bool { return e.Path == f.path })
		if f.entry != nil && f.entry.Existed {
			if err := fsys.remove(f.entry.Backup); err != nil {
				return err
			}
		}
	}
	if len(st.Files) > 0 {
		return fsys.saveState(st)
	}
	if err := os.RemoveAll(fsys.host(StateDir)); err != nil {
		return fmt.Errorf("remove %s: %w", StateDir, err)
	}
	for i := len(st.CreatedDirs) - 1; i >= 0; i-- {
		d := st.CreatedDirs[i]
		if isUnder(d, StateDir) {
			continue
		}
		if _, err := fsys.removeEmptyDir(d); err != nil {
			return err
		}
	}
	return nil
}
