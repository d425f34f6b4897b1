"""Small value classes without `dataclasses`: a class lists its fields in `__slots__` and writes
its own `__init__`; equality, repr, hashing and `replace` are a dataclass's, read from the slots.

Why not `@dataclass` for the classes a recall loads: importing `dataclasses` (with `inspect`, `ast`,
`dis`, `tokenize`) and compiling each class's generated methods, one `exec` each, was the largest
part of a one-shot `mem recall` that memtool controls (docs/benchmarks-history.md, One-shot `mem recall`).
"""


class Value:
    """Equal to a value of the same class whose fields are equal; unhashable (it may change), as a dataclass."""

    __slots__ = ()
    __hash__ = None

    def _values(self) -> tuple:
        return tuple([getattr(self, name) for name in self.__slots__])

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return self._values() == other._values()
        return NotImplemented

    def __repr__(self) -> str:
        fields = ", ".join([f"{name}={getattr(self, name)!r}" for name in self.__slots__])
        return f"{type(self).__qualname__}({fields})"

    def as_dict(self) -> dict:
        """Field name → value (a shallow `dataclasses.asdict`)."""
        return {name: getattr(self, name) for name in self.__slots__}


class FrozenValue(Value):
    """A value that cannot change once made, hashable by its fields (a frozen dataclass)."""

    __slots__ = ()

    def _set(self, *values) -> None:
        """Set the fields in the order of `__slots__` (for `__init__`)."""
        for name, value in zip(self.__slots__, values, strict=True):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        raise AttributeError(f"cannot delete field {name!r}")

    def __hash__(self) -> int:
        return hash(self._values())

    def __reduce__(self):
        """Copied and pickled through `__init__` (whose arguments are the fields, in order)."""
        return type(self), self._values()

    def replace(self, **changes):
        """A copy with `changes` (`dataclasses.replace`)."""
        return type(self)(**self.as_dict() | changes)
