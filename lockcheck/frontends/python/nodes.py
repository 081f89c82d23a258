"""The tree the Python analysis reads: small typed nodes lowered from tree-sitter-python.

The classes carry the names and fields of the Python grammar's usual shapes (``Call.func``,
``Call.args`` of ``Arg(value, keyword, star)``, ``If.test/body/orelse`` with ``elif`` as a
nested ``If``, ``Try.handlers/orelse/finalbody``, a block's ``body`` of statement lines...),
so that the analysis asks its questions of a tree with one meaning per construct whatever
the source's dialect (Python 2 print statements arrive as ``print(...)`` calls).

Every node has ``s``/``e``, its ``str`` offsets in the file, and ``parent``.
"""

from __future__ import annotations

from ...hints import Any


class Node:
    """A node: its fields are class attributes defaulting to None, set per instance."""

    _fields: tuple[str, ...] = ()
    parent: Node | None = None

    def __init__(self, s: int, e: int, **kw: Any) -> None:
        kw["s"] = s
        kw["e"] = e
        self.__dict__ = kw  # the fields as given (a fresh dict: no copy)

    def kids(self) -> list[Node]:
        """The child nodes, in source order."""
        out: list[Node] = []
        d = self.__dict__
        for f in self._fields:
            v = d.get(f)
            if v is None:
                continue
            if v.__class__ is list:
                out.extend(x for x in v if isinstance(x, Node))
            elif isinstance(v, Node):
                out.append(v)
        return out

    def __repr__(self) -> str:  # debugging aid
        return f"{type(self).__name__}({self.s}:{self.e})"


def _cls(name: str, fields: tuple[str, ...], base: type = Node, extra: tuple = ()) -> type:
    attrs: dict[str, Any] = {f: None for f in fields + extra}
    attrs["_fields"] = fields
    return type(name, (base,), attrs)


class BaseStatement(Node):
    pass


class BaseCompoundStatement(BaseStatement):
    pass


class BaseSmallStatement(Node):
    pass


class BaseExpression(Node):
    pass


class Operator(Node):
    pass


Module = _cls("Module", ("body",))
SimpleStatementLine = _cls("SimpleStatementLine", ("body",), BaseStatement)
IndentedBlock = _cls("IndentedBlock", ("body",))
SimpleStatementSuite = _cls("SimpleStatementSuite", ("body",))

# small statements
Expr = _cls("Expr", ("value",), BaseSmallStatement)
AssignTarget = _cls("AssignTarget", ("target",))
Assign = _cls("Assign", ("targets", "value"), BaseSmallStatement)
AnnAssign = _cls("AnnAssign", ("target", "annotation", "value"), BaseSmallStatement)
AugAssign = _cls("AugAssign", ("target", "value"), BaseSmallStatement)
Return = _cls("Return", ("value",), BaseSmallStatement)
Raise = _cls("Raise", ("exc",), BaseSmallStatement)
Pass = _cls("Pass", (), BaseSmallStatement)
Break = _cls("Break", (), BaseSmallStatement)
Continue = _cls("Continue", (), BaseSmallStatement)
AsName = _cls("AsName", ("name",))
ImportAlias = _cls("ImportAlias", ("name", "asname"))
ImportStar = _cls("ImportStar", ())
Import = _cls("Import", ("names",), BaseSmallStatement)
ImportFrom = _cls("ImportFrom", ("module", "names"), BaseSmallStatement, ("relative",))
OtherSmall = _cls("OtherSmall", ("kids_",), BaseSmallStatement)

# compound statements
If = _cls("If", ("test", "body", "orelse"), BaseCompoundStatement)
Else = _cls("Else", ("body",))
For = _cls("For", ("target", "iter", "body", "orelse"), BaseCompoundStatement)
While = _cls("While", ("test", "body", "orelse"), BaseCompoundStatement)
ExceptHandler = _cls("ExceptHandler", ("type", "name", "body"))
Finally = _cls("Finally", ("body",))
Try = _cls("Try", ("body", "handlers", "orelse", "finalbody"), BaseCompoundStatement)
WithItem = _cls("WithItem", ("item", "asname"))
With = _cls("With", ("items", "body"), BaseCompoundStatement)
Param = _cls("Param", ("name", "default"))
Parameters = _cls(
    "Parameters", ("posonly_params", "params", "star_arg", "kwonly_params", "star_kwarg")
)
Decorator = _cls("Decorator", ("decorator",))
FunctionDef = _cls("FunctionDef", ("decorators", "name", "params", "body"), BaseCompoundStatement)
ClassDef = _cls("ClassDef", ("decorators", "name", "bases", "body"), BaseCompoundStatement)
OtherCompound = _cls("OtherCompound", ("kids_",), BaseCompoundStatement)

# expressions
Name = _cls("Name", (), BaseExpression, ("value",))
Attribute = _cls("Attribute", ("value", "attr"), BaseExpression)
Arg = _cls("Arg", ("keyword", "value"), Node, ("star",))
Call = _cls("Call", ("func", "args"), BaseExpression)
SimpleString = _cls("SimpleString", (), BaseExpression, ("value", "prefix", "quote"))
FormattedStringText = _cls("FormattedStringText", (), Node, ("value",))
FormattedStringExpression = _cls(
    "FormattedStringExpression", ("expression",), Node, ("conversion", "format_spec")
)
FormattedString = _cls("FormattedString", ("parts",), BaseExpression, ("start", "end"))
ConcatenatedString = _cls("ConcatenatedString", ("left", "right"), BaseExpression)
Integer = _cls("Integer", (), BaseExpression, ("value",))
Float = _cls("Float", (), BaseExpression, ("value",))
UnaryOperation = _cls("UnaryOperation", ("operator", "expression"), BaseExpression)
BinaryOperation = _cls("BinaryOperation", ("left", "operator", "right"), BaseExpression)
BooleanOperation = _cls("BooleanOperation", ("left", "operator", "right"), BaseExpression)
ComparisonTarget = _cls("ComparisonTarget", ("operator", "comparator"))
Comparison = _cls("Comparison", ("left", "comparisons"), BaseExpression)
Element = _cls("Element", ("value",))
Tuple = _cls("Tuple", ("elements",), BaseExpression)
List = _cls("List", ("elements",), BaseExpression)
CompFor = _cls("CompFor", ("target", "iter", "rest", "inner_for_in"))
ListComp = _cls("ListComp", ("elt", "for_in"), BaseExpression)
SetComp = _cls("SetComp", ("elt", "for_in"), BaseExpression)
GeneratorExp = _cls("GeneratorExp", ("elt", "for_in"), BaseExpression)
DictComp = _cls("DictComp", ("elt", "for_in"), BaseExpression)
Index = _cls("Index", ("value",))
SubscriptElement = _cls("SubscriptElement", ("slice",))
Subscript = _cls("Subscript", ("value", "slice"), BaseExpression)
Lambda = _cls("Lambda", ("params", "body"), BaseExpression)
Other = _cls("Other", ("kids_",), BaseExpression)

# operators
Not = _cls("Not", (), Operator)
Minus = _cls("Minus", (), Operator)
Plus = _cls("Plus", (), Operator)
BitInvert = _cls("BitInvert", (), Operator)
Add = _cls("Add", (), Operator)
Subtract = _cls("Subtract", (), Operator)
Multiply = _cls("Multiply", (), Operator)
Divide = _cls("Divide", (), Operator)
FloorDivide = _cls("FloorDivide", (), Operator)
Modulo = _cls("Modulo", (), Operator)
Power = _cls("Power", (), Operator)
BitOr = _cls("BitOr", (), Operator)
BitAnd = _cls("BitAnd", (), Operator)
BitXor = _cls("BitXor", (), Operator)
LeftShift = _cls("LeftShift", (), Operator)
RightShift = _cls("RightShift", (), Operator)
MatrixMultiply = _cls("MatrixMultiply", (), Operator)
And = _cls("And", (), Operator)
Or = _cls("Or", (), Operator)
Equal = _cls("Equal", (), Operator)
NotEqual = _cls("NotEqual", (), Operator)
LessThan = _cls("LessThan", (), Operator)
GreaterThan = _cls("GreaterThan", (), Operator)
LessThanEqual = _cls("LessThanEqual", (), Operator)
GreaterThanEqual = _cls("GreaterThanEqual", (), Operator)
In = _cls("In", (), Operator)
NotIn = _cls("NotIn", (), Operator)
Is = _cls("Is", (), Operator)
IsNot = _cls("IsNot", (), Operator)

UNARY = {"-": Minus, "+": Plus, "~": BitInvert}
BINARY = {
    "+": Add,
    "-": Subtract,
    "*": Multiply,
    "/": Divide,
    "//": FloorDivide,
    "%": Modulo,
    "**": Power,
    "|": BitOr,
    "&": BitAnd,
    "^": BitXor,
    "<<": LeftShift,
    ">>": RightShift,
    "@": MatrixMultiply,
}
COMPARE = {
    "==": Equal,
    "!=": NotEqual,
    "<>": NotEqual,
    "<": LessThan,
    ">": GreaterThan,
    "<=": LessThanEqual,
    ">=": GreaterThanEqual,
    "in": In,
    "not in": NotIn,
    "is": Is,
    "is not": IsNot,
}
