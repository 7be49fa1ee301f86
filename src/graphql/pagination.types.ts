import { Field, Int, ObjectType, registerEnumType, type ClassType } from 'type-graphql';

/** GraphQL's `direction: ASC | DESC`; the values are the REST spellings, so both reach the service alike. */
export enum DirectionEnum {
  ASC = 'asc',
  DESC = 'desc',
}
registerEnumType(DirectionEnum, { name: 'Direction' });

/** `<Name>Page`: the `page` list format (total and page numbers) for items of type `item`. */
export function PageOf<T extends object>(item: ClassType<T>, name: string) {
  @ObjectType(name, { simpleResolvers: true })
  class Page {
    @Field(() => [item]) data!: T[];
    @Field(() => Int) total!: number;
    @Field(() => Int) perPage!: number;
    @Field(() => Int) currentPage!: number;
    @Field(() => Int) lastPage!: number;
    @Field(() => Int, { nullable: true }) from!: number | null;
    @Field(() => Int, { nullable: true }) to!: number | null;
    @Field(() => Int, { nullable: true }) nextPage!: number | null;
  }
  return Page;
}

/** `<Name>SimplePage`: data and hasMore. */
export function SimplePageOf<T extends object>(item: ClassType<T>, name: string) {
  @ObjectType(name, { simpleResolvers: true })
  class SimplePage {
    @Field(() => [item]) data!: T[];
    @Field(() => Boolean) hasMore!: boolean;
  }
  return SimplePage;
}

/** `<Name>CursorPage`: keyset slices with opaque cursors. */
export function CursorPageOf<T extends object>(item: ClassType<T>, name: string) {
  @ObjectType(name, { simpleResolvers: true })
  class CursorPage {
    @Field(() => [item]) data!: T[];
    @Field(() => String, { nullable: true }) nextCursor!: string | null;
    @Field(() => String, { nullable: true }) prevCursor!: string | null;
    @Field(() => Boolean) hasNextPage!: boolean;
    @Field(() => Boolean) hasPrevPage!: boolean;
    @Field(() => Int) perPage!: number;
    @Field(() => String) path!: string;
  }
  return CursorPage;
}

@ObjectType('Message', { simpleResolvers: true })
export class MessageType {
  @Field(() => String) message!: string;
}
