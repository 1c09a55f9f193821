; Added to tree-sitter-php's own tags query, whose call pattern wants a qualified name: `greet($x)`
; parses with a plain name.

(function_call_expression
  function: (name) @name) @reference.call
