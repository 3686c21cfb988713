import { parse, specifiedRules, validate, type GraphQLSchema } from 'graphql';
import { isGraphQLError } from '../errors/graphql-error.js';
import { envelop, type Plugin } from 'graphql-yoga';
import { documentLimitsPlugin } from './limits.js';
import { incrementalValidationPlugin } from './incremental.js';

/** graphql-js's parser and validation, as yoga's own engine sets them up. */
const engine: Plugin = {
  onParse: ({ setParseFn }) => setParseFn(parse),
  onValidate: ({ setValidationFn, addValidationRule }) => {
    setValidationFn(validate);
    specifiedRules.forEach(addValidationRule);
  },
};

/**
 * Parsing and validation with the same document limits (depth, aliases, tokens, directives) and
 * the same rules for `@defer` and `@stream` as a request's, through the same plugins, so that a
 * document accepted here is one the server runs.
 */
const checker = envelop({ plugins: [engine, documentLimitsPlugin({ hideSuggestions: false }), incrementalValidationPlugin()] });

/**
 * What is wrong with a GraphQL document against `schema` and the document limits, or null when
 * nothing is: the first syntax or validation error's message.
 */
export function documentChecker(schema: GraphQLSchema): (text: string) => string | null {
  return (text) => {
    const { parse: parseDocument, validate: validateDocument } = checker({});
    try {
      const errors = validateDocument(schema, parseDocument(text));
      return errors.length ? errors[0]!.message : null;
    } catch (error) {
      // A syntax error, or a limit's refusal: the limits throw theirs, as they do in a request.
      if (isGraphQLError(error)) return error.message;
      throw error;
    }
  };
}
