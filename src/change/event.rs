//! The one way a change starts a log entry: a fresh id, the time and the
//! actor of the change's context, and the actor passed through the secret
//! policy (it goes into every entry). Every command that appends builds its
//! events here, so no command reaches into another's internals for it.

use crate::model::event::{new_id, Event, Op};
use crate::model::key::Key;
use crate::policy;
use crate::store::{Ctx, StoreError};

/// A new event by this actor at this time, with a fresh id.
pub(crate) fn event(
    ctx: &Ctx,
    op: Op,
    key: Option<Key>,
    prev: Vec<String>,
    body: String,
) -> Result<Event, StoreError> {
    // The actor goes into every entry: it passes the policy too.
    policy::check_secrets(&ctx.actor, "actor")?;
    Ok(Event {
        id: new_id(ctx.now).map_err(StoreError::io("random source"))?,
        op,
        time: ctx.now,
        actor: ctx.actor.clone(),
        key,
        prev,
        reason: None,
        consumed: Vec::new(),
        redacted: None,
        body,
    })
}
