import { Ctx, Query, Resolver } from 'type-graphql';
import type { RequestContext } from '../../core/context';
import type { Services } from '../services';
import { presentUser, UserType, type UserView } from '../user/user.types';

@Resolver()
export class AuthResolver {
  constructor(private readonly services: Services) {}

  @Query(() => UserType, { nullable: true, description: 'The authenticated user; null when anonymous.' })
  async me(@Ctx() ctx: RequestContext): Promise<UserView | null> {
    const user = await ctx.actor();
    return user ? presentUser(user) : null;
  }
}
