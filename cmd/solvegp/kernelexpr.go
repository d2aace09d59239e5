package main

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/solvegp/solvegp/gp/kernel"
)

// kernelNames lists the kernel names of a -kernel expression.
const kernelNames = "rbf, matern12, matern32, matern52, periodic, rq, linear, polynomial (degree 2; polynomialN for degree N), constant or white"

// kexpr is a node of a parsed -kernel expression: a named kernel (name
// set) or a sum or product of parts (op '+' or '*'), optionally restricted
// to input columns (cols, the raw items after '@').
type kexpr struct {
	name  string
	op    byte
	parts []*kexpr
	cols  []kcol
	pos   int // byte offset of the node in the expression, for errors
}

// kcol is one item of an '@' column list: a 0-based index or a header
// name, with its offset in the expression.
type kcol struct {
	text string
	pos  int
}

// exprError is an error in a -kernel expression, located at a byte offset.
type exprError struct {
	expr string
	pos  int
	msg  string
}

// Error names the offending character by its 1-based position and shows
// it under a caret.
func (e *exprError) Error() string {
	col := utf8.RuneCountInString(e.expr[:e.pos])
	return fmt.Sprintf("-kernel %q: %s at character %d\n  %s\n  %s^", e.expr, e.msg, col+1, e.expr, strings.Repeat(" ", col))
}

// kparser is a recursive-descent parser of
//
//	expr   = term { "+" term }
//	term   = factor { "*" factor }
//	factor = ( name | "(" expr ")" ) [ "@" column { "," column } ]
//
// where a column is a 0-based index or a header name (any text without
// + * ( ) @ or ,). Spaces between tokens are ignored.
type kparser struct {
	s   string
	pos int
}

// parseKernelExpr parses a -kernel expression.
func parseKernelExpr(s string) (*kexpr, error) {
	p := &kparser{s: s}
	e, err := p.expr()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos < len(s) {
		r, _ := utf8.DecodeRuneInString(s[p.pos:])
		return nil, p.errorf("unexpected %q", r)
	}
	return e, nil
}

func (p *kparser) errorf(format string, args ...any) error {
	return &exprError{expr: p.s, pos: p.pos, msg: fmt.Sprintf(format, args...)}
}

func (p *kparser) space() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t') {
		p.pos++
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (p *kparser) peek() byte {
	p.space()
	if p.pos < len(p.s) {
		return p.s[p.pos]
	}
	return 0
}

// chain parses operands joined by op.
func (p *kparser) chain(op byte, operand func() (*kexpr, error)) (*kexpr, error) {
	first, err := operand()
	if err != nil {
		return nil, err
	}
	node := &kexpr{op: op, parts: []*kexpr{first}, pos: first.pos}
	for p.peek() == op {
		p.pos++
		next, err := operand()
		if err != nil {
			return nil, err
		}
		node.parts = append(node.parts, next)
	}
	if len(node.parts) == 1 {
		return first, nil
	}
	return node, nil
}

func (p *kparser) expr() (*kexpr, error) { return p.chain('+', p.term) }

func (p *kparser) term() (*kexpr, error) { return p.chain('*', p.factor) }

func (p *kparser) factor() (*kexpr, error) {
	var node *kexpr
	switch c := p.peek(); {
	case c == '(':
		p.pos++
		inner, err := p.expr()
		if err != nil {
			return nil, err
		}
		if p.peek() != ')' {
			if p.pos >= len(p.s) {
				return nil, p.errorf("missing ')'")
			}
			r, _ := utf8.DecodeRuneInString(p.s[p.pos:])
			return nil, p.errorf("expected ')', found %q", r)
		}
		p.pos++
		node = inner
		if inner.cols != nil && p.peek() == '@' {
			// Columns of columns, "(rbf@0)@1,2": a one-part sum holds
			// the outer selection.
			node = &kexpr{op: '+', parts: []*kexpr{inner}, pos: inner.pos}
		}
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf && isLetterAt(p.s, p.pos):
		start := p.pos
		for p.pos < len(p.s) && isNameByte(p.s[p.pos]) {
			p.pos++
		}
		name := strings.ToLower(p.s[start:p.pos])
		if _, _, ok := kernelOf(name); !ok {
			p.pos = start
			return nil, p.errorf("unknown kernel %q (want %s)", name, kernelNames)
		}
		node = &kexpr{name: name, pos: start}
	case c == 0:
		return nil, p.errorf("expected a kernel name or '(' but the expression ends")
	default:
		r, _ := utf8.DecodeRuneInString(p.s[p.pos:])
		return nil, p.errorf("expected a kernel name or '(', found %q", r)
	}
	if p.peek() == '@' {
		p.pos++
		cols, err := p.columns()
		if err != nil {
			return nil, err
		}
		node.cols = cols
	}
	return node, nil
}

// isLetterAt reports whether the rune at byte offset i of s is a letter.
func isLetterAt(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsLetter(r)
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= utf8.RuneSelf
}

// columns parses the list after '@'.
func (p *kparser) columns() ([]kcol, error) {
	var cols []kcol
	for {
		p.space()
		start := p.pos
		for p.pos < len(p.s) && !strings.ContainsRune("+*()@,", rune(p.s[p.pos])) {
			p.pos++
		}
		text := strings.TrimSpace(p.s[start:p.pos])
		if text == "" {
			p.pos = start
			return nil, p.errorf("expected a column index or name after '@' or ','")
		}
		cols = append(cols, kcol{text: text, pos: start})
		if p.peek() != ',' {
			return cols, nil
		}
		p.pos++
	}
}

// kernelOf returns the family of a stationary kernel name (ok and
// stationary true), or ok alone for the other names; polynomialN gives
// degree N.
func kernelOf(name string) (fam kernel.Family, stationary, ok bool) {
	switch name {
	case "rbf", "se":
		return kernel.RBF, true, true
	case "matern12":
		return kernel.Matern12, true, true
	case "matern32":
		return kernel.Matern32, true, true
	case "matern52":
		return kernel.Matern52, true, true
	case "periodic", "rq", "linear", "polynomial", "constant", "white":
		return 0, false, true
	}
	if deg, found := strings.CutPrefix(name, "polynomial"); found {
		if q, err := strconv.Atoi(deg); err == nil && q >= 1 && q <= kernel.MaxDegree {
			return 0, false, true
		}
	}
	return 0, false, false
}

// kernelInit holds the initial hyperparameters of the kernels an
// expression builds (from -lengthscale, -variance, -ard and -noise).
type kernelInit struct {
	lengthscale, variance, noise float64
	ard                          bool
}

// build constructs the kernel of e on d inputs whose names (nil without a
// header) are used to resolve '@' columns.
func (e *kexpr) build(expr string, d int, names []string, in kernelInit) (kernel.Kernel, error) {
	if e.cols == nil {
		return e.buildOn(expr, d, names, in)
	}
	cols := make([]int, len(e.cols))
	sub := make([]string, 0, len(e.cols))
	for i, c := range e.cols {
		j, err := resolveColumn(expr, c, d, names)
		if err != nil {
			return nil, err
		}
		cols[i] = j
		if names != nil {
			sub = append(sub, names[j])
		}
	}
	if names == nil {
		sub = nil
	}
	base, err := e.buildOn(expr, len(cols), sub, in)
	if err != nil {
		return nil, err
	}
	a, err := kernel.NewActive(base, d, cols)
	if err != nil {
		return nil, &exprError{expr: expr, pos: e.cols[0].pos, msg: err.Error()}
	}
	return a, nil
}

// resolveColumn returns the index of column c among d inputs.
func resolveColumn(expr string, c kcol, d int, names []string) (int, error) {
	if j, err := strconv.Atoi(c.text); err == nil {
		if j < 0 || j >= d {
			return 0, &exprError{expr: expr, pos: c.pos, msg: fmt.Sprintf("column %d out of range (the kernel sees %d inputs, 0 to %d)", j, d, d-1)}
		}
		return j, nil
	}
	if names == nil {
		return 0, &exprError{expr: expr, pos: c.pos, msg: fmt.Sprintf("column name %q but the data file has no header", c.text)}
	}
	for j, n := range names[:d] {
		if n == c.text {
			return j, nil
		}
	}
	return 0, &exprError{expr: expr, pos: c.pos, msg: fmt.Sprintf("no input column named %q (inputs: %s)", c.text, strings.Join(names[:d], ", "))}
}

// buildOn constructs e, ignoring its columns, on d inputs.
func (e *kexpr) buildOn(expr string, d int, names []string, in kernelInit) (kernel.Kernel, error) {
	var (
		k   kernel.Kernel
		err error
	)
	if e.name == "" {
		parts := make([]kernel.Kernel, len(e.parts))
		for i, p := range e.parts {
			if parts[i], err = p.build(expr, d, names, in); err != nil {
				return nil, err
			}
		}
		if e.op == '*' {
			k, err = kernel.NewProduct(parts...)
		} else {
			k, err = kernel.NewSum(parts...)
		}
	} else {
		k, err = newNamedKernel(e.name, d, in)
	}
	if err != nil {
		return nil, &exprError{expr: expr, pos: e.pos, msg: err.Error()}
	}
	return k, nil
}

// newNamedKernel returns the kernel called name on d inputs.
func newNamedKernel(name string, d int, in kernelInit) (kernel.Kernel, error) {
	var opts []kernel.Option
	if in.ard {
		opts = append(opts, kernel.ARD())
	}
	if fam, stationary, _ := kernelOf(name); stationary {
		return kernel.NewStationary(fam, d, in.lengthscale, in.variance, opts...)
	}
	switch name {
	case "periodic":
		return kernel.NewPeriodic(d, 1, in.lengthscale, in.variance, opts...)
	case "rq":
		return kernel.NewRationalQuadratic(d, 1, in.lengthscale, in.variance, opts...)
	case "linear":
		return kernel.NewLinear(d, in.variance, 1)
	case "constant":
		return kernel.NewConstant(d, in.variance)
	case "white":
		return kernel.NewWhite(d, in.noise)
	}
	deg := 2
	if s := strings.TrimPrefix(name, "polynomial"); s != "" {
		deg, _ = strconv.Atoi(s)
	}
	return kernel.NewPolynomial(d, deg, in.variance, 1)
}

// newKernel builds the spec's -kernel expression on d inputs, resolving
// column names among the spec's input names.
func (s *modelSpec) newKernel(d int) (kernel.Kernel, error) {
	e, err := parseKernelExpr(s.kernel)
	if err != nil {
		return nil, err
	}
	var names []string
	if len(s.names) >= d {
		names = s.names[:d]
	}
	return e.build(s.kernel, d, names, kernelInit{lengthscale: s.lengthscale, variance: s.variance, noise: s.noise, ard: s.ard})
}
