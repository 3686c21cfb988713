import type { GraphQLResolveInfo } from 'graphql';

type ResponsePath = GraphQLResolveInfo['path'];

/** A response position's one path object in a request, with the positions beneath it. */
class InternedPath {
  /** Created when a position beneath is first interned: a node whose fields are all leaves needs none. */
  children: Map<string | number, InternedPath> | undefined;
  constructor(
    readonly prev: InternedPath | undefined,
    readonly key: string | number,
    readonly typename: string | undefined,
  ) {}
}

/**
 * The one path object of each response position in a request. graphql-js hands every resolver
 * beneath a position the same linked path object; graphql-jit builds the links afresh at each
 * call. Pothos' Prisma plugin records the selection a parent loaded against the path object of
 * that parent's field and finds it again by walking a child's `path.prev` links by identity, so
 * without one object per position a relation that was already loaded (`messages → contact`)
 * would be fetched a second time.
 */
export class ResponsePaths {
  private readonly roots = new Map<string | number, InternedPath>();

  intern(path: ResponsePath): InternedPath {
    if (path instanceof InternedPath) return path;
    const prev = path.prev && this.intern(path.prev);
    const siblings = prev ? (prev.children ??= new Map()) : this.roots;
    let interned = siblings.get(path.key);
    if (!interned) {
      interned = new InternedPath(prev, path.key, path.typename);
      siblings.set(path.key, interned);
    }
    return interned;
  }
}

