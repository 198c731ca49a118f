// ESLint rule `svc/max-class-lines`: no class over `max` lines, blank lines and comments not counted
// (eslint.config.mjs). ESLint's own max-lines-per-function sees each method alone, so without this
// the bulk of a part can move into one long class unnoticed.
export const maxClassLines = {
  meta: {
    type: 'suggestion',
    schema: [{ type: 'object', properties: { max: { type: 'integer', minimum: 1 } }, additionalProperties: false }],
    messages: { tooLong: 'Class {{name}} has {{lines}} lines of code (at most {{max}}): give it named parts.' },
  },
  create(context) {
    const max = context.options[0]?.max ?? 200;
    const source = context.sourceCode;
    const check = (node) => {
      const lines = new Set();
      for (const token of source.getTokens(node)) for (let line = token.loc.start.line; line <= token.loc.end.line; line++) lines.add(line);
      if (lines.size > max)
        context.report({ node, messageId: 'tooLong', data: { name: node.id?.name ?? '(anonymous)', lines: String(lines.size), max: String(max) } });
    };
    return { ClassDeclaration: check, ClassExpression: check };
  },
};
