; tree-sitter-bash ships no tags query.

(function_definition
  name: (word) @name) @definition.function

(command
  name: (command_name (word) @name)) @reference.call
