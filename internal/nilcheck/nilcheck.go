// Package nilcheck tells whether an interface value holds nothing usable:
// either no value at all, or a nil pointer, map, slice, function or
// channel (a "typed nil", such as a (*mat.Dense)(nil) passed as a
// mat.Matrix, which compares unequal to nil and panics on first use).
package nilcheck

import "reflect"

// SamePointer reports whether a and b are pointers to the same value: a
// Clone method that returns its receiver makes no copy. Pointers to values
// of zero size are never the same: Go may give distinct ones the same
// address (a new copy of a stateless type can have its original's), and
// they hold nothing that could be shared.
func SamePointer(a, b any) bool {
	ra, rb := reflect.ValueOf(a), reflect.ValueOf(b)
	return ra.Kind() == reflect.Pointer && rb.Kind() == reflect.Pointer &&
		ra.Type().Elem().Size() != 0 && ra.Pointer() == rb.Pointer()
}

// IsCopy reports whether cp, the result of orig's Clone method, is a copy
// of orig: not nil, of orig's own dynamic type (a type that embeds a
// Cloner inherits a Clone whose copy is of the embedded type), and not
// orig itself (SamePointer).
func IsCopy(cp, orig any) bool {
	return !IsNil(cp) && reflect.TypeOf(cp) == reflect.TypeOf(orig) && !SamePointer(cp, orig)
}

// IsNil reports whether v is nil or holds a nil pointer, map, slice,
// function, channel or interface.
func IsNil(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface, reflect.UnsafePointer:
		return r.IsNil()
	}
	return false
}
