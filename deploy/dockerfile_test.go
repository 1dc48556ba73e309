package deploy

import (
	"encoding/json"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	line int
	cmd  string // upper case: FROM, RUN, …
	args string
}

// stage is one FROM and the instructions under it.
type stage struct {
	image, name string
	body        []instruction
}

// readDockerfile splits a Dockerfile into stages. It knows comments,
// parser directives and backslash continuations, which is all the files
// here use.
func readDockerfile(t *testing.T, file string) []stage {
	t.Helper()
	var (
		stages []stage
		cur    *instruction
	)
	add := func(in instruction) {
		if in.cmd == "FROM" {
			f := strings.Fields(in.args)
			s := stage{image: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				s.name = f[2]
			} else if len(f) != 1 {
				t.Fatalf("%s:%d: FROM %s", file, in.line, in.args)
			}
			stages = append(stages, s)
			return
		}
		if len(stages) == 0 {
			if in.cmd != "ARG" {
				t.Fatalf("%s:%d: %s before FROM", file, in.line, in.cmd)
			}
			return
		}
		stages[len(stages)-1].body = append(stages[len(stages)-1].body, in)
	}
	for i, raw := range strings.Split(string(readFile(t, file)), "\n") {
		line := strings.TrimSpace(raw)
		if cur == nil && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if cur == nil {
			cmd, args, _ := strings.Cut(line, " ")
			cur = &instruction{line: i + 1, cmd: strings.ToUpper(cmd)}
			line = args
		}
		more := strings.HasSuffix(line, "\\")
		cur.args = strings.TrimSpace(cur.args + " " + strings.TrimSuffix(line, "\\"))
		if !more {
			add(*cur)
			cur = nil
		}
	}
	if cur != nil {
		t.Fatalf("%s: ends inside a continued line", file)
	}
	return stages
}

// find returns the arguments of every cmd instruction of the stage.
func (s stage) find(cmd string) []string {
	var out []string
	for _, in := range s.body {
		if in.cmd == cmd {
			out = append(out, in.args)
		}
	}
	return out
}

// execForm reads an instruction in JSON exec form.
func execForm(t *testing.T, what, args string) []string {
	t.Helper()
	var v []string
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		t.Fatalf("%s %s: not in exec form: %v", what, args, err)
	}
	return v
}

const dockerfile = "Dockerfile"

// imageUser is the uid the image runs as.
func imageUser(t *testing.T) int {
	t.Helper()
	stages := readDockerfile(t, dockerfile)
	users := stages[len(stages)-1].find("USER")
	if len(users) != 1 {
		t.Fatalf("%s: final stage has %d USER instructions, want 1", dockerfile, len(users))
	}
	uid, err := strconv.Atoi(strings.Split(users[0], ":")[0])
	if err != nil {
		t.Fatalf("%s: USER %s: give a numeric uid, so runtimes can check it is not root: %v", dockerfile, users[0], err)
	}
	return uid
}

func TestDockerfileStages(t *testing.T) {
	stages := readDockerfile(t, dockerfile)
	if len(stages) < 2 {
		t.Fatalf("%s: %d stages; build and run in separate stages", dockerfile, len(stages))
	}
	names := map[string]bool{}
	for i, s := range stages {
		if strings.HasSuffix(s.image, ":latest") || (!strings.Contains(s.image, ":") && !strings.Contains(s.image, "@")) {
			t.Errorf("stage %d: image %s is not pinned to a version", i, s.image)
		}
		for _, c := range s.find("COPY") {
			if from, ok := flag(strings.Fields(c), "--from"); ok && !names[from] {
				t.Errorf("stage %d: COPY --from=%s names no earlier stage", i, from)
			}
		}
		if s.name != "" {
			names[s.name] = true
		}
	}

	var build *stage
	for i := range stages {
		for _, r := range stages[i].find("RUN") {
			if strings.Contains(r, "go build") {
				build = &stages[i]
			}
		}
	}
	if build == nil {
		t.Fatalf("%s: no stage runs go build", dockerfile)
	}
	run := strings.Join(build.find("RUN"), "\n")
	for _, want := range []string{"CGO_ENABLED=1", "./cmd/viaduct", "-X main.version=${VERSION}"} {
		if !strings.Contains(run, want) {
			t.Errorf("%s: the build stage's go build lacks %q (SQLite needs cgo; the version comes from the VERSION argument)", dockerfile, want)
		}
	}
	if !slices.ContainsFunc(build.find("ARG"), func(a string) bool { return strings.HasPrefix(a, "VERSION") }) {
		t.Errorf("%s: the build stage declares no ARG VERSION", dockerfile)
	}
	if !regexp.MustCompile(`(?m)^var version = `).Match(readFile(t, "../cmd/viaduct/main.go")) {
		t.Error("cmd/viaduct/main.go: no var version for -X main.version")
	}
	if mk := string(readFile(t, "../Makefile")); strings.Contains(mk, "-X ") && !strings.Contains(mk, "-X main.version=") {
		t.Error("the Makefile sets the version in another variable than the Dockerfile")
	}

	final := stages[len(stages)-1]
	if uid := imageUser(t); uid == 0 {
		t.Errorf("%s: the image runs as root", dockerfile)
	}
	entry := final.find("ENTRYPOINT")
	if len(entry) != 1 {
		t.Fatalf("%s: %d ENTRYPOINTs", dockerfile, len(entry))
	}
	bin := execForm(t, "ENTRYPOINT", entry[0])[0]
	if !slices.ContainsFunc(final.find("COPY"), func(c string) bool { f := strings.Fields(c); return f[len(f)-1] == bin }) {
		t.Errorf("%s: ENTRYPOINT %s is not copied into the final stage", dockerfile, bin)
	}
}

// TestDockerfileAgrees checks the image's port, volume and command
// against the configurations that run it.
func TestDockerfileAgrees(t *testing.T) {
	stages := readDockerfile(t, dockerfile)
	final := stages[len(stages)-1]
	c := loadCompose(t)
	k := loadKube(t)
	cfgs := []configFile{k.cfg}
	for _, v := range c.viaducts {
		cfgs = append(cfgs, c.viaductConfig(t, v))
	}
	var exposed []string
	for _, e := range final.find("EXPOSE") {
		exposed = append(exposed, strings.Fields(e)...)
	}
	volumes := strings.Join(final.find("VOLUME"), " ")
	for _, cfg := range cfgs {
		_, p := hostPort(t, "listen", cfg.Listen)
		if !slices.Contains(exposed, strconv.Itoa(p)) {
			t.Errorf("%s: EXPOSE %q; %s listens on %d", dockerfile, exposed, cfg.file, p)
		}
		if !strings.Contains(volumes, `"`+cfg.DataDir+`"`) {
			t.Errorf("%s: VOLUME %s; %s keeps its data in %s", dockerfile, volumes, cfg.file, cfg.DataDir)
		}
	}
	cmds := final.find("CMD")
	if len(cmds) != 1 {
		t.Fatalf("%s: %d CMDs", dockerfile, len(cmds))
	}
	cmd := execForm(t, "CMD", cmds[0])
	hcs := final.find("HEALTHCHECK")
	if len(hcs) != 1 {
		t.Fatalf("%s: %d HEALTHCHECKs, want 1: the image has no shell, so nothing else can check it", dockerfile, len(hcs))
	}
	_, hcArgs, _ := strings.Cut(hcs[0], " CMD ")
	hc := execForm(t, "HEALTHCHECK CMD", hcArgs)
	entry := execForm(t, "ENTRYPOINT", final.find("ENTRYPOINT")[0])
	want := append(slices.Clone(entry), "healthcheck", "--config")
	if cfg, ok := flag(cmd, "--config"); !ok || !slices.Equal(hc, append(want, cfg)) {
		t.Errorf("%s: HEALTHCHECK CMD %q; want %q and the --config of CMD %q", dockerfile, hc, want, cmd)
	}
	args := map[string][]string{"StatefulSet viaduct": k.ctr.Args}
	for _, v := range c.viaducts {
		args["compose service "+v] = c.svc(v).Command
	}
	for what, a := range args {
		if !slices.Equal(a, cmd) {
			t.Errorf("%s runs %q; the image's CMD is %q", what, a, cmd)
		}
	}
}

// TestDockerignoreKeepsSources checks that Dockerfile.dockerignore leaves
// in the build context every file go build needs.
func TestDockerignoreKeepsSources(t *testing.T) {
	var patterns []string
	for _, l := range strings.Split(string(readFile(t, "Dockerfile.dockerignore")), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			patterns = append(patterns, l)
		}
	}
	needed := []string{"go.mod", "go.sum"}
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, ".."+string(filepath.Separator)))
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || rel == "deploy") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go") {
			needed = append(needed, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range patterns {
		for _, f := range needed {
			if ignores(p, f) {
				t.Errorf("Dockerfile.dockerignore: %q leaves %s out of the build", p, f)
			}
		}
	}
	if !ignores("**/data", "node/data/catalog.db") || ignores("**/data", "node/metadata.go") {
		t.Error("ignores: ** is misread")
	}
}

// ignores reports whether a .dockerignore pattern leaves out a file: the
// pattern matches the file's path or one of its parent directories, "**"
// standing for any number of directories.
func ignores(pattern, file string) bool {
	var match func(p, f []string) bool
	match = func(p, f []string) bool {
		if len(p) == 0 {
			return true // a parent directory matched
		}
		if p[0] == "**" {
			for i := 0; i <= len(f); i++ {
				if match(p[1:], f[i:]) {
					return true
				}
			}
			return false
		}
		if len(f) == 0 {
			return false
		}
		ok, _ := path.Match(p[0], f[0])
		return ok && match(p[1:], f[1:])
	}
	return match(strings.Split(pattern, "/"), strings.Split(file, "/"))
}
