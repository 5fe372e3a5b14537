//! What a route can serve: any [`Handler`] (plain functions of request and response, routers,
//! static files) or a function that also receives the router's state `&S`. The marker types
//! [`Plain`] and [`WithState`] only tell the two apart at compile time.

use crate::handler::{BoxError, Handler, HandlerResult};
use crate::request::Request;
use crate::response::Response;

/// A route's handler with the state type erased to a call.
pub(crate) type Endpoint<S> =
    Box<dyn Fn(&S, &mut Request<'_>, &mut Response) -> HandlerResult + Send + Sync>;

/// Marker: the endpoint is a plain [`Handler`].
pub enum Plain {}
/// Marker: the endpoint takes the router's state first.
pub enum WithState {}

/// Something a `Router<S>` can route to; `M` is [`Plain`] or [`WithState`], inferred.
pub trait IntoEndpoint<S, M>: Send + Sync + 'static {
    /// The boxed call.
    #[doc(hidden)]
    fn into_endpoint(self) -> Endpoint<S>;
}

impl<S, H: Handler> IntoEndpoint<S, Plain> for H {
    fn into_endpoint(self) -> Endpoint<S> {
        Box::new(move |_: &S, req: &mut Request<'_>, res: &mut Response| self.handle(req, res))
    }
}

impl<S, F, E> IntoEndpoint<S, WithState> for F
where
    F: Fn(&S, &mut Request<'_>, &mut Response) -> Result<(), E> + Send + Sync + 'static,
    E: Into<BoxError>,
{
    fn into_endpoint(self) -> Endpoint<S> {
        Box::new(
            move |state: &S, req: &mut Request<'_>, res: &mut Response| {
                self(state, req, res).map_err(Into::into)
            },
        )
    }
}
